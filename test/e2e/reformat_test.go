package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// formatted is a package file in a style of its own: aligned comments,
// extra spaces, a flow list, a document end marker. Nothing in it is
// injected (a ConfigMap, an opted-out Deployment).
const formatted = `# The shop's config: not a workload, so the function leaves it alone.
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop      # aligned
  namespace: web  # comments
data:
  mode:   "fast"
  list: [a,   b]
...
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    sidecar.kinject.dev/inject: "false"   # opted out
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx
`

// TestKptReformats backs the README's Troubleshooting entry: kpt fn eval
// rewrites a file the function did not change, exactly as it does with a
// function that returns its input as it came (so the change is kpt's
// writer, not inject-fn), and leaves it alone from then on; kubectl inject
// --local --in-place and inject-fn's file mode keep it byte for byte.
func TestKptReformats(t *testing.T) {
	kpt := need(t, "kpt")
	fn := filepath.Join(injectFn(t), "inject-fn")
	noop := filepath.Join(t.TempDir(), "noop")
	writeFile(t, noop, "#!/bin/sh\nexec cat\n")
	if err := os.Chmod(noop, 0o755); err != nil {
		t.Fatal(err)
	}
	eval := func(function string) string {
		t.Helper()
		pkg := filepath.Join(t.TempDir(), "pkg")
		writeFile(t, filepath.Join(pkg, "app.yaml"), formatted)
		r := run(t, "", kpt, "fn", "eval", "--exec", function, pkg)
		if r.code != 0 {
			t.Fatalf("kpt fn eval --exec %s: exit %d\n%s", function, r.code, r.stderr)
		}
		if function == fn && !strings.Contains(r.stderr, "skipped: opted_out") {
			t.Errorf("kpt fn eval: the function's results do not show the Deployment skipped:\n%s", r.stderr)
		}
		b, err := os.ReadFile(filepath.Join(pkg, "app.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if again := run(t, "", kpt, "fn", "eval", "--exec", function, pkg); again.code != 0 {
			t.Fatalf("second kpt fn eval: exit %d", again.code)
		}
		if c, _ := os.ReadFile(filepath.Join(pkg, "app.yaml")); string(c) != string(b) {
			t.Errorf("a second kpt fn eval changed the file again:\n%s", c)
		}
		return string(b)
	}
	byFn, byNoop := eval(fn), eval(noop)
	if byFn == formatted {
		t.Fatal("kpt no longer reformats files: drop the kpt entry of docs/troubleshooting.md")
	}
	if byFn != byNoop {
		t.Errorf("kpt's output with inject-fn differs from its output with a no-op function:\n%s\n---\n%s", byFn, byNoop)
	}
	for _, gone := range []string{"shop      # aligned", "mode:   ", "[a,   b]", "\n...\n"} {
		if strings.Contains(byFn, gone) {
			t.Errorf("kpt kept %q; docs/troubleshooting.md says it does not", gone)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "app.yaml")
	writeFile(t, file, formatted)
	plugin := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	if r := run(t, "", plugin, "--local", "-R", "-f", dir, "--in-place"); r.code != 0 {
		t.Fatalf("kubectl-inject --local --in-place: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(file); string(b) != formatted {
		t.Errorf("kubectl-inject --local --in-place changed the file:\n%s", b)
	}
	config := filepath.Join(dir, "config.yaml.txt")
	writeFile(t, config, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {}\n")
	if out := mustRun(t, "", fn, config, file); out != formatted {
		t.Errorf("inject-fn's file mode changed the file:\n%s", out)
	}
}
