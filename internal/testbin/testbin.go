// Package testbin builds the project's binaries for tests that run them as
// real processes, once per test binary.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Plugin names the binaries of kubectl inject: the front door and the full
// command it hands everything but --local to.
const (
	Plugin     = "kubectl-inject"
	PluginLive = "kubectl-inject-live"
)

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// PluginDir builds kubectl-inject and kubectl-inject-live into one new
// directory, as a release installs them, and returns the directory.
func PluginDir(t testing.TB) string {
	t.Helper()
	pluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kinject-plugin-")
		if err != nil {
			pluginErr = err
			return
		}
		for name, pkg := range map[string]string{Plugin: "./plugin", PluginLive: "./plugin/kubectl-inject-live"} {
			if pluginErr = Build(filepath.Join(dir, name), pkg); pluginErr != nil {
				return
			}
		}
		pluginDir = dir
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	return pluginDir
}

// Build builds the package pkg (relative to the module root, "./fn") into
// out, statically as releases are.
func Build(out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = ModuleRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// ModuleRoot is the directory of go.mod.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// WriteFile writes content to path, making its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
