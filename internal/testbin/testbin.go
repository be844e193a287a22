// Package testbin gives tests their programs: the project's binaries,
// built once per test binary, and the pinned test tools (kustomize, krew,
// kube-apiserver...) that hack/install-tools.sh and hack/build-apiserver.sh
// put in the tool cache.
package testbin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// ToolCache is where hack/*.sh install the pinned test tools (in its bin
// directory): $KINJECT_CACHE, default $HOME/.cache/kubectl-inject.
func ToolCache() string {
	if d := os.Getenv("KINJECT_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "kubectl-inject-cache")
	}
	return filepath.Join(home, ".cache", "kubectl-inject")
}

// FindTool finds a test tool: the pinned one in the tool cache first, then
// one on PATH.
func FindTool(name string) (string, error) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	cached := filepath.Join(ToolCache(), "bin", name)
	if st, err := os.Stat(cached); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return cached, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found in %s nor on PATH: run hack/install-tools.sh", name, filepath.Dir(cached))
}

// InCI reports whether a missing tool or service must fail the tests
// even with -short (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// NeedTool is FindTool for a test: a missing tool fails it, with the
// command that installs it (Missing).
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := FindTool(name)
	if err != nil {
		Missing(t, "%v", err)
	}
	return p
}

// Missing fails the test for a program it needs and lacks; msg says what
// installs it. Only the fast tests (-short, make unit) skip instead, and
// not in CI: a go test ./... that cannot run a test must not pass for
// having skipped it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if testing.Short() && !InCI() {
		t.Skipf("skipping in -short mode: %s", msg)
	}
	t.Fatalf("REQUIRED TOOL MISSING: %s (make tools installs every tool; go test -short runs only the tests that need none)", msg)
}

// Unavailable skips the test for a service it needs that no command of
// ours installs (a Docker daemon), or fails it in CI.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("REQUIRED SERVICE UNAVAILABLE IN CI: %s", msg)
	}
	t.Skipf("skipping: %s (set CI=true to make this a failure)", msg)
}

// Plugin names the binaries of kubectl inject: the front door and the full
// command it hands everything but --local to; Helper is the CEL evaluator
// that the front door and inject-fn run beside them.
const (
	Plugin     = "kubectl-inject"
	PluginLive = "kinject-live"
	Helper     = "kinject-cel"
)

var (
	pluginOnce sync.Once
	pluginDir  string
	pluginErr  error
)

// PluginDir builds kubectl-inject, kinject-live and kinject-cel into one
// new directory, as a release installs them, and returns the directory.
func PluginDir(t testing.TB) string {
	t.Helper()
	pluginOnce.Do(func() {
		dir, err := BuildDir("kinject-plugin-")
		if err != nil {
			pluginErr = err
			return
		}
		for name, pkg := range map[string]string{Plugin: "./plugin/kubectl-inject", PluginLive: "./plugin/kinject-live", Helper: "./plugin/kinject-cel"} {
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

var (
	dirsMu sync.Mutex
	dirs   []string
)

// BuildDir makes a new temporary directory for built programs, which
// Cleanup (and Run) removes: binaries built once per test binary outlive
// any one test, so t.TempDir cannot hold them.
func BuildDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	dirsMu.Lock()
	dirs = append(dirs, dir)
	dirsMu.Unlock()
	return dir, nil
}

// Cleanup removes every directory BuildDir made (PluginDir's too).
func Cleanup() {
	dirsMu.Lock()
	defer dirsMu.Unlock()
	for _, dir := range dirs {
		_ = os.RemoveAll(dir)
	}
	dirs = nil
}

// Run runs the tests of m, then Cleanup, and returns the exit code: the
// body of the TestMain of every package that builds programs with this
// package, so that a test run leaves nothing in the temporary directory.
func Run(m *testing.M) int {
	code := m.Run()
	Cleanup()
	return code
}

// Build builds the package pkg (relative to the module root, "./fn/inject-fn") into
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

// BuildFunction builds inject-fn into dir, with kinject-cel beside it as
// the function's image holds them, and returns inject-fn's path.
func BuildFunction(dir string) (string, error) {
	if err := Build(filepath.Join(dir, Helper), "./plugin/kinject-cel"); err != nil {
		return "", err
	}
	fn := filepath.Join(dir, "inject-fn")
	return fn, Build(fn, "./fn/inject-fn")
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

// Exec runs cmd and returns its exit code and what it wrote to stdout and
// stderr (left empty for a stream the caller set). A command that cannot
// be started fails t.
func Exec(t testing.TB, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &errOut
	}
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// Golden compares got with the file at path, or rewrites the file when
// update is set (the package's -update flag). pkg names the package for
// the hint ("./test/e2e").
func Golden(t testing.TB, update bool, path, got, pkg string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test %s -update creates it)", err, pkg)
	}
	if got != string(want) {
		rel, relErr := filepath.Rel(ModuleRoot(), path)
		if relErr != nil {
			rel = path
		}
		t.Errorf("the output differs from %s (go test %s -update accepts it):\n--- got\n%s", rel, pkg, got)
	}
}

// GoListDeps returns the packages pkgs are built from, themselves
// included (go list -deps), for the tests that keep a binary's or a
// package's dependencies in check.
func GoListDeps(t testing.TB, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return strings.Fields(string(out))
}
