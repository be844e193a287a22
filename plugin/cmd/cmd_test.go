package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/plugin/local"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// runCmd runs the command in-process with test streams and returns stdout,
// stderr and the exit code Execute would give.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.WriteString(stdin)
	c := NewCmdInject(streams, local.FrontEnd{})
	c.SetArgs(args)
	code := Execute(c, streams)
	return out.String(), errOut.String(), code
}

const app = `# the app
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # keep me
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: 80}]
`

func TestLocal(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no cluster needed
	stdout, stderr, code := runCmd(t, app, "--local", "-f", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "deployment.apps/web injected\nservice/web skipped: not_a_workload\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	for _, want := range []string{"# the app\n", "name: web # keep me\n", "matchLabels: {app: web}", "- name: envoy", "ports: [{port: 80}]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}

	t.Run("idempotent", func(t *testing.T) {
		again, stderr, code := runCmd(t, stdout, "--local", "-f", "-")
		if code != 0 || again != stdout || !strings.Contains(stderr, "deployment.apps/web unchanged") {
			t.Errorf("second run changed the output (exit %d, %s)", code, stderr)
		}
	})
	t.Run("uninject restores the input", func(t *testing.T) {
		back, _, code := runCmd(t, stdout, "--local", "-f", "-", "--uninject")
		if code != 0 || back != app {
			t.Errorf("exit %d, got:\n%s", code, back)
		}
	})
	t.Run("check", func(t *testing.T) {
		out, stderr, code := runCmd(t, app, "--local", "-f", "-", "--check")
		if code != 1 || out != "" || !strings.Contains(stderr, "deployment.apps/web would be injected") {
			t.Errorf("check of a stale manifest: exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		if _, stderr, code := runCmd(t, stdout, "--local", "-f", "-", "--check"); code != 0 {
			t.Errorf("check of a current manifest: exit %d: %s", code, stderr)
		}
	})
	t.Run("selector", func(t *testing.T) {
		_, stderr, _ := runCmd(t, app, "--local", "-f", "-", "-l", "app=other")
		if !strings.Contains(stderr, "deployment.apps/web skipped: labels_not_selected") {
			t.Errorf("stderr: %s", stderr)
		}
	})
	t.Run("flags", func(t *testing.T) {
		out, _, code := runCmd(t, app, "--local", "-f", "-", "--native", "--image", "envoyproxy/envoy:v9")
		if code != 0 || !strings.Contains(out, "initContainers:") || !strings.Contains(out, "image: envoyproxy/envoy:v9") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
}

func TestLocalTemplateFile(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.yaml")
	writeFile(t, seed, `apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-initializer}
data:
  config: |
    containers:
      - name: proxy
        image: "envoyproxy/envoy:v1.30.0"
`)
	out, stderr, code := runCmd(t, app, "--local", "-f", "-", "--template", seed)
	if code != 0 || !strings.Contains(out, "- name: proxy") {
		t.Errorf("exit %d %s:\n%s", code, stderr, out)
	}
	ref := filepath.Join(dir, "ref.yaml")
	writeFile(t, ref, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: x}\nspec:\n  templateRef: {name: elsewhere}\n")
	_, stderr, code = runCmd(t, app, "--local", "-f", "-", "--template", ref)
	if code != 1 || !strings.Contains(stderr, "--local does not read") {
		t.Errorf("templateRef to the cluster in --local: exit %d: %s", code, stderr)
	}
}

func TestInPlace(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "sub", "bad.yaml")
	writeFile(t, good, app)
	writeFile(t, bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: nope\n")
	if err := os.Chmod(good, 0o640); err != nil {
		t.Fatal(err)
	}

	_, stderr, code := runCmd(t, "", "--local", "-f", dir, "-R", "--in-place")
	if code != 1 || !strings.Contains(stderr, "so no file was changed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := slurp(t, good); got != app {
		t.Error("good.yaml was written although another document failed")
	}

	// Without -R the subdirectory is not read; a dry run writes nothing.
	if _, stderr, code := runCmd(t, "", "--local", "-f", dir, "--in-place", "--dry-run=client"); code != 0 || slurp(t, good) != app {
		t.Fatalf("dry run: exit %d, file changed: %v: %s", code, slurp(t, good) != app, stderr)
	}
	_, stderr, code = runCmd(t, "", "--local", "-f", dir, "--in-place")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := slurp(t, good); !strings.Contains(got, "- name: envoy") {
		t.Errorf("good.yaml not injected:\n%s", got)
	}
	if fi, _ := os.Stat(good); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"nothing named", nil, []string{"name the objects"}},
		{"local without files", []string{"--local"}, []string{"--local needs the manifests"}},
		{"local with cluster flags", []string{"--local", "-f", "x.yaml", "--server-side", "-A", "--dry-run=server", "deploy/web"},
			[]string{"--server-side needs a cluster", "--all-namespaces needs a cluster", "--dry-run=server needs a cluster", `remove the arguments "deploy/web"`}},
		{"in-place of stdin", []string{"--local", "-f", "-", "--in-place"}, []string{`--in-place cannot rewrite "-"`}},
		{"in-place live", []string{"deploy/web", "--in-place"}, []string{"--in-place rewrites local files"}},
		{"bad values", []string{"deploy/web", "--dry-run=maybe", "-o", "wide", "--mode", "sometimes", "--concurrency", "0"},
			[]string{"--dry-run must be", "--output must be", `--mode: "sometimes" is not a mode`, "--concurrency must be"}},
		{"force without server-side", []string{"deploy/web", "--force-conflicts"}, []string{"--force-conflicts needs --server-side"}},
		{"check in place", []string{"--local", "-f", "a.yaml", "--check", "--in-place"}, []string{"--check changes nothing"}},
		{"files and names", []string{"-f", "a.yaml", "deploy/web"}, []string{"either -f or TYPE/NAME"}},
		{"all and selector", []string{"deploy", "--all", "-l", "a=b"}, []string{"--all and --selector"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
			_, stderr, code := runCmd(t, "", tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	out, _, code := runCmd(t, "", "--help")
	if code != 0 || !strings.Contains(out, "kubectl inject [TYPE") || !strings.Contains(out, "kubectl inject --local -f app.yaml") {
		t.Errorf("help (exit %d):\n%s", code, out)
	}
	out, _, code = runCmd(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "kubectl-inject v0.0.0-dev") {
		t.Errorf("version (exit %d): %q", code, out)
	}
}

// TestGoldenLocal runs the core's golden corpus through --local: the output
// must be the core's expected.yaml, and injecting it again must change
// nothing.
func TestGoldenLocal(t *testing.T) {
	dirs, err := filepath.Glob("../../pkg/inject/testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden corpus: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var template []string
			if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
				template = []string{"--template", filepath.Join(dir, "config.yaml")}
			}
			args := append([]string{"--local", "-f", filepath.Join(dir, "input.yaml")}, template...)
			out, stderr, code := runCmd(t, "", args...)
			if code == 0 {
				again, stderr2, code2 := runCmd(t, out, append([]string{"--local", "-f", "-"}, template...)...)
				if code2 != 0 || again != out {
					t.Errorf("injecting the output again: exit %d, changed %v\n%s", code2, again != out, stderr2)
				}
			}
			report := slurp(t, filepath.Join(dir, "report.txt"))
			if wantFail := strings.Contains(report, ": error"); (code != 0) != wantFail {
				t.Errorf("exit %d, report:\n%s\nstderr:\n%s", code, report, stderr)
			}
			if want := slurp(t, filepath.Join(dir, "expected.yaml")); out != want {
				t.Errorf("stdout differs from expected.yaml\n--- got:\n%s\n--- want:\n%s", out, want)
			}
			if lines := strings.Count(stderr, "\n"); lines < strings.Count(report, "\n") {
				t.Errorf("%d report lines, the core reports %d:\n%s", lines, strings.Count(report, "\n"), stderr)
			}
		})
	}
}

// checkGoldenFile compares got with the file at path, or rewrites the file
// with -update.
func checkGoldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := slurp(t, path); got != want {
		t.Errorf("the output differs from %s (go test ./plugin/cmd -update rewrites it):\n%s", path, got)
	}
}

// The helpers the tests of every binary share.
var (
	writeFile = testbin.WriteFile
	slurp     = testbin.ReadFile
)

// TestExampleCLI runs the commands of examples/cli/README.md.
func TestExampleCLI(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(wd, "..", ".."))
	const dir = "examples/cli"
	app, expected := slurp(t, dir+"/app.yaml"), slurp(t, dir+"/expected.yaml")
	report := "examples/cli/app.yaml: deployment.apps/web injected\n" +
		"examples/cli/app.yaml: service/web skipped: not_a_workload\n" +
		"examples/cli/app.yaml: cronjob.batch/report skipped: opted_out\n"
	readme := slurp(t, dir+"/README.md")

	out, stderr, code := runCmd(t, "", "--local", "-f", dir+"/app.yaml")
	if code != 0 || out != expected || stderr != report {
		t.Errorf("inject: exit %d, stderr:\n%s\nstdout matches expected.yaml: %v", code, stderr, out == expected)
	}
	if !strings.Contains(readme, report) {
		t.Error("README's report is stale")
	}
	out, _, code = runCmd(t, "", "--local", "-f", dir+"/app.yaml", "--template", dir+"/sidecar.yaml")
	if code != 0 || out != slurp(t, dir+"/expected-template.yaml") {
		t.Errorf("--template: exit %d, output differs from expected-template.yaml", code)
	}
	if out, _, _ = runCmd(t, "", "--local", "-f", dir+"/expected.yaml"); out != expected {
		t.Error("injecting expected.yaml again changed it")
	}
	if out, _, _ = runCmd(t, "", "--local", "-f", dir+"/expected.yaml", "--uninject"); out != app {
		t.Error("uninject of expected.yaml is not app.yaml")
	}
	_, stderr, code = runCmd(t, "", "--local", "-f", dir+"/app.yaml", "--check")
	if code != 1 || !strings.Contains(readme, "$ kubectl inject --local -f examples/cli/app.yaml --check\n"+stderr) {
		t.Errorf("--check: exit %d, README lacks its output:\n%s", code, stderr)
	}
	if _, _, code = runCmd(t, "", "--local", "-f", dir+"/expected.yaml", "--check"); code != 0 {
		t.Errorf("--check of expected.yaml: exit %d", code)
	}
}

func TestPrivilegedTemplate(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	tpl := filepath.Join(t.TempDir(), "privileged.yaml")
	if err := os.WriteFile(tpl, []byte("containers:\n- name: proxy\n  image: example/proxy:1.0\n  securityContext: {privileged: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCmd(t, app, "--local", "-f", "-", "--template", tpl)
	if code != 0 || !strings.Contains(stderr, "Warning: template widens privileges: containers[0] (proxy): securityContext.privileged is true\n") {
		t.Errorf("without --strict: exit %d, stderr %q; want a warning and success", code, stderr)
	}
	stdout, stderr, code := runCmd(t, app, "--local", "-f", "-", "--template", tpl, "--strict")
	if code == 0 || stdout != "" || !strings.Contains(stderr, "template widens privileges (strict): containers[0] (proxy): securityContext.privileged is true") {
		t.Errorf("with --strict: exit %d, stdout %q, stderr %q; want a refusal and no output", code, stdout, stderr)
	}
}

// TestUnreservedPortWarning: --local warns of a port the template's Envoy
// binds (its admin API) that no containerPort declares and reservedPorts
// does not list; the embedded default, which reserves it, has no warning.
func TestUnreservedPortWarning(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	text := inject.DefaultTemplateYAML()
	start, end := strings.Index(text, "reservedPorts:"), strings.Index(text, "# What a workload may set")
	if start < 0 || end < start {
		t.Fatal("the default template has no reservedPorts list before its parameters")
	}
	tpl := filepath.Join(t.TempDir(), "unreserved.yaml")
	if err := os.WriteFile(tpl, []byte(text[:start]+text[end:]), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `Warning: container "envoy" binds port 9901 (admin), which no containerPort declares and reservedPorts does not list: an app on it would not be refused (add it to reservedPorts)` + "\n"
	_, stderr, code := runCmd(t, app, "--local", "-f", "-", "--template", tpl)
	if code != 0 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "Warning") != 1 {
		t.Errorf("exit %d, stderr %q; want the warning once and success", code, stderr)
	}
	if _, stderr, code := runCmd(t, app, "--local", "-f", "-"); code != 0 || strings.Contains(stderr, "Warning") {
		t.Errorf("the default: exit %d, stderr %q; want no warning", code, stderr)
	}
}
