package processor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/fn/processor"
)

const appYAML = `# the app
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web   # four-space lists survive
          image: nginx
---
apiVersion: v1
kind: Service
metadata: {name: web}
`

func TestMain_fileMode(t *testing.T) {
	write := tempWriter(t)
	app := write("app.yaml", appYAML)
	cfg := write("config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {template-configmap: tmpl}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tmpl}\ndata:\n  config: |\n    containers:\n    - name: proxy\n      image: example.com/proxy:1\n")

	run := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := processor.Main(args, strings.NewReader(""), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	injected, report, code := run(t, cfg, app)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, report)
	}
	if !strings.Contains(injected, "        - name: proxy\n") || !strings.HasPrefix(injected, appYAML[:strings.Index(appYAML, "spec:")]) {
		t.Errorf("injected output:\n%s", injected)
	}
	if !strings.Contains(report, app+": deployment.apps/web injected\n") {
		t.Errorf("report: %q", report)
	}
	again, _, _ := run(t, cfg, write("injected.yaml", injected))
	if again != injected {
		t.Errorf("second run changed the output:\n%s", again)
	}
	restored, _, code := run(t, "--uninject", cfg, write("injected2.yaml", injected))
	if code != 0 || restored != appYAML {
		t.Errorf("uninject (exit %d) did not restore the input byte for byte:\n%s", code, restored)
	}
}

// TestMain_fileModeJSONValues: JSON values one after the other (jq's
// output) are each injected and reported, uninject gives the file back byte
// for byte, and a template ConfigMap among them is found by templateRef.
func TestMain_fileModeJSONValues(t *testing.T) {
	write := tempWriter(t)
	const jq = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"a","image":"x"}]}}` + "\n" +
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"tmpl"},"data":{"config":"containers:\n- name: proxy\n  image: proxy:1\n"}}` + "\n" +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"b","image":"x"}]}}` + "\n"
	input := write("jq.json", jq)
	cfg := write("config.yaml", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: s}\nspec: {templateRef: {name: tmpl}}\n")
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := processor.Main(args, strings.NewReader(""), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	injected, report, code := run(cfg, input)
	if code != 0 || strings.Count(injected, `{"name":"proxy","image":"proxy:1"}`) != 2 {
		t.Fatalf("exit %d, stderr:\n%s\noutput:\n%s", code, report, injected)
	}
	if want := input + ": pod/a injected\n" + input + ": pod/b injected\n"; report != want {
		t.Errorf("report:\n%s\nwant:\n%s", report, want)
	}
	back, _, code := run("--uninject", cfg, write("injected.json", injected))
	if code != 0 || back != jq {
		t.Errorf("uninject (exit %d) did not restore the input byte for byte:\n%s", code, back)
	}
}

// TestMain_fileModeConfigNotAnObject checks that a config file whose
// document has a list for metadata is an error naming the file, the
// document and the field, and that nothing is written.
func TestMain_fileModeConfigNotAnObject(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	app := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: a}\nspec: {}\n---\napiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: [b]\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(app, []byte(appYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := processor.Main([]string{cfg, app}, strings.NewReader(""), &out, &errOut)
	if want := cfg + ": document 2: metadata: must be a mapping, not a list"; code == 0 || !strings.Contains(errOut.String(), want) {
		t.Errorf("exit %d, stderr %q, want it to contain %q", code, errOut.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q, want nothing", out.String())
	}
}

func TestMain_flags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"help", []string{"--help"}, "FUNCTION CONFIG", 0},
		{"version", []string{"--version"}, "inject-fn ", 0},
		{"missing config", []string{"/nonexistent/config.yaml"}, "", 1},
		{"unknown flag", []string{"--bogus"}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			code := processor.Main(tc.args, strings.NewReader(""), &out, &errOut)
			if code != tc.code || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, tc.code, out.String(), errOut.String())
			}
		})
	}
}

func TestMain_krmErrorExitsNonZeroWithOutput(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n  data: {native: maybe}\n"
	var out, errOut bytes.Buffer
	code := processor.Main(nil, strings.NewReader(in), &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "severity: error") || !strings.Contains(out.String(), "items: []") {
		t.Errorf("exit %d, stdout:\n%s", code, out.String())
	}
	if !strings.Contains(errOut.String(), "data.native") {
		t.Errorf("stderr does not name the field: %q", errOut.String())
	}
}

// TestMain_fileModeProfilesAllOrNone: with several profiles, a document
// one of them fails on (here the second profile's container clashes with
// the first's) is written as it came, with no profile's change, and the
// report says so; the other documents are injected by every profile.
func TestMain_fileModeProfilesAllOrNone(t *testing.T) {
	write := tempWriter(t)
	cfg := write("profiles.yaml", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: mesh}\nspec:\n  profile: mesh\n---\n"+
		"apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: logs}\nspec:\n  profile: logs\n  template:\n    containers: [{name: log-agent, image: fluent/fluent-bit:3.0}]\n")
	clash := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    metadata:\n      annotations: {logs.sidecar.kinject.dev/inject: \"true\"}\n    spec:\n      containers:\n      - {name: log-agent, image: other/agent:1}\n"
	app := write("app.yaml", appYAML+"---\n"+clash)
	var out, errOut bytes.Buffer
	code := processor.Main([]string{cfg, app}, strings.NewReader(""), &out, &errOut)
	if code == 0 {
		t.Fatalf("exit 0; want a failure\n%s", errOut.String())
	}
	if !strings.HasSuffix(out.String(), "---\n"+clash) {
		t.Errorf("the document a profile failed on was changed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "- name: envoy\n") || !strings.Contains(out.String(), "- {name: log-agent, image: 'fluent/fluent-bit:3.0'}\n") {
		t.Errorf("the other document lacks a profile's sidecar:\n%s", out.String())
	}
	if want := app + ":20: document 3 left as it was: profile \"logs\" failed on it, so no profile's change is kept\n"; !strings.Contains(errOut.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, errOut.String())
	}
}

// tempWriter returns a function that writes a file of a new temporary
// directory and returns its path.
func tempWriter(t *testing.T) func(name, text string) string {
	t.Helper()
	dir := t.TempDir()
	return func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
