package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kinject/kubectl-inject/fn/processor"
	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) { os.Exit(testbin.Run(m)) }

// injectFn builds inject-fn once per test binary.
func injectFn(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		dir, err := testbin.BuildDir("kinject-fn-")
		if err != nil {
			buildErr = err
			return
		}
		binary, buildErr = testbin.BuildFunction(dir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// run runs inject-fn with args and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(injectFn(t), args...)
	cmd.Stdin = strings.NewReader("")
	code, stdout, stderr := testbin.Exec(t, cmd)
	return code, stdout, stderr
}

// TestCommandLine: --help prints the help once, to stdout; a mistake says
// what and where to look, on stderr, with exit code 2.
func TestCommandLine(t *testing.T) {
	cases := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"help", []string{"--help"}, 0, processor.Help(), ""},
		{"h", []string{"-h"}, 0, processor.Help(), ""},
		{"unknown flag", []string{"--bogus"}, 2, "", "flag provided but not defined: -bogus\nRun 'inject-fn --help' for usage.\n"},
		{"copy-to with files", []string{"--copy-to", t.TempDir(), "config.yaml"}, 2, "", "inject-fn: --copy-to takes no other arguments, not [\"config.yaml\"]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(t, c.args...)
			if code != c.code || stdout != c.stdout || stderr != c.stderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %.40q..., stderr %q", code, stdout, stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
}

// TestCopyTo: the binary copies itself into a directory, over an earlier
// copy, and the copy is the same program.
func TestCopyTo(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "inject-fn")
	if runtime.GOOS == "windows" {
		dest += ".exe"
	}
	testbin.WriteFile(t, dest, "an older copy")
	code, stdout, stderr := run(t, "--copy-to", dir)
	if code != 0 || !strings.HasSuffix(stdout, " copied to "+dest+"\n") || stderr != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	want, err := os.ReadFile(injectFn(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dest)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the copy differs from the binary (%v)", err)
	}
	if info, _ := os.Stat(dest); runtime.GOOS != "windows" && info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", info.Mode().Perm())
	}
	helper, err := os.ReadFile(filepath.Join(filepath.Dir(injectFn(t)), testbin.Helper))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, testbin.Helper)); err != nil || !bytes.Equal(got, helper) {
		t.Errorf("%s was not copied beside inject-fn (%v)", testbin.Helper, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left %d files in the directory, want the two copies", len(entries))
	}
	out, err := exec.Command(dest, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "inject-fn ") {
		t.Errorf("the copy does not run: %v %q", err, out)
	}
	if code, _, stderr := run(t, "--copy-to", filepath.Join(dir, "missing")); code != 1 || !strings.Contains(stderr, "no such file or directory") {
		t.Errorf("into a missing directory: exit %d, stderr %q", code, stderr)
	}
}

// TestFileModeReport: file mode words its report as kubectl inject --local
// does: objects as kubectl names them, errors at the file's line and
// column, documents counted from 1.
func TestFileModeReport(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	testbin.WriteFile(t, config, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {mode: opt-out}\n")
	app := filepath.Join(dir, "app.yaml")
	testbin.WriteFile(t, app, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"+
		"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: [}\n")
	code, _, stderr := run(t, config, app)
	want := app + ": deployment.apps/web injected\n" +
		app + ":15:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", code, stderr, want)
	}
}

// computedList is a ResourceList whose template computes two values with
// expressions beyond the core's subset of CEL, one of them from a double.
const computedList = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: kinject.dev/v1alpha1
  kind: SidecarInjection
  metadata: {name: computed}
  spec:
    template:
      containers:
      - name: proxy
        image: example/proxy:1.0
        args: [--port, "80", --name, x]
      parameters:
      - annotation: port
        field: containers[proxy].args[--port]
        type: int
        expression: object.spec.containers[0].ports[0].containerPort * 2
      - annotation: name
        field: containers[proxy].args[--name]
        type: string
        expression: object.metadata.labels.app.upperAscii() + '-' + string(object.spec.containers[0].ports[1].containerPort / 2.0)
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web}
  spec:
    template:
      metadata:
        labels: {app: web}
      spec:
        containers:
        - name: web
          image: nginx
          ports: [{containerPort: 8080}, {containerPort: 5.0}]
`

// TestExpressionsInHelper: inject-fn, which does not link cel-go, runs the
// expressions beyond the core's subset in kinject-cel beside it, with the
// result cel-go gives in the process (the Pod's double stays a double on
// the way); without kinject-cel it fails saying what to install.
func TestExpressionsInHelper(t *testing.T) {
	podexpr.Use(celgo.Compile)
	var want, wantErr bytes.Buffer
	if code := processor.Main(nil, strings.NewReader(computedList), &want, &wantErr); code != 0 {
		t.Fatalf("in the process: exit %d\n%s", code, wantErr.String())
	}
	if !strings.Contains(want.String(), `args: [--port, "16160", --name, WEB-2.5]`) {
		t.Fatalf("in the process, not the values computed:\n%s", want.String())
	}
	cmd := exec.Command(injectFn(t))
	cmd.Stdin = strings.NewReader(computedList)
	cmd.Env = append(os.Environ(), podexpr.HelperEnv+"=", "PATH="+t.TempDir())
	code, stdout, stderr := testbin.Exec(t, cmd)
	if code != 0 || stdout != want.String() {
		t.Errorf("inject-fn with kinject-cel beside it: exit %d, stderr %s\n%s\nwant what cel-go gives in the process:\n%s", code, stderr, stdout, want.String())
	}

	alone := filepath.Join(t.TempDir(), "inject-fn")
	b, err := os.ReadFile(injectFn(t))
	if err != nil {
		t.Fatal(err)
	}
	testbin.WriteFile(t, alone, string(b))
	if err := os.Chmod(alone, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(alone)
	cmd.Stdin = strings.NewReader(computedList)
	cmd.Env = append(os.Environ(), podexpr.HelperEnv+"=", "PATH="+t.TempDir())
	code, _, stderr = testbin.Exec(t, cmd)
	if code != 1 || !strings.Contains(stderr, "kinject-cel is not at "+filepath.Join(filepath.Dir(alone), testbin.Helper)) {
		t.Errorf("inject-fn without kinject-cel: exit %d, stderr:\n%s", code, stderr)
	}
}
