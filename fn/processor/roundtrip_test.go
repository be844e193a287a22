package processor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/fn/processor"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// TestGoldenRoundTrip holds the function to the core's absolute promises
// on every case of its corpus that injects without errors: running it with
// uninject on its output gives the input's items exactly (for inputs
// without a status record), and injecting the output again changes no
// byte.
func TestGoldenRoundTrip(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			in := readInput(t, dir)
			out, runErr := run(t, in)
			switch name := filepath.Base(dir); {
			case runErr != nil && strings.HasPrefix(name, "error-"):
				t.Skip("the case fails on purpose")
			case runErr != nil:
				t.Fatalf("the function failed on a case not named error-*: %v\n%s", runErr, out)
			case strings.HasPrefix(name, "uninject-"):
				t.Skip("the case uninjects")
			}
			again, err := run(t, withoutResults(t, out))
			if err != nil {
				t.Fatalf("a second run failed: %v\n%s", err, again)
			}
			if bytes.Contains(in, []byte("admissionPolicy: true")) {
				// The items are left as they are; running again replaces the
				// policy objects in place.
				if got, want := items(t, again), items(t, out); got != want {
					t.Errorf("a second run changed the items:\n%s", got)
				}
				return
			}
			if got, want := items(t, again), items(t, out); got != want {
				t.Errorf("inject(inject(x)) != inject(x):\n%s", got)
			}
			back, err := run(t, withConfig(t, withoutResults(t, out), uninjectConfig(t, in)))
			if err != nil {
				t.Fatalf("uninject: %v\n%s", err, back)
			}
			if bytes.Contains(in, []byte(naming.StatusAnnotation)) {
				return
			}
			// Absolute: the items as they came in, not as a run that
			// changes nothing writes them, which could lose the same byte.
			if got, want := items(t, back), items(t, in); got != want {
				t.Errorf("uninject(inject(x)) != x:\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// uninjectConfig is the ResourceList's own function config with uninject
// set: spec.uninject in a SidecarInjection, data.uninject in a ConfigMap.
// When the SidecarInjections among the items configure the run, it is a
// ConfigMap that removes every profile.
func uninjectConfig(t *testing.T, rl []byte) string {
	t.Helper()
	n, err := yaml.Parse(string(rl))
	if err != nil {
		t.Fatal(err)
	}
	if len(sidecarInjections(t, n)) > 0 {
		return uninjectAll
	}
	fc := n.Field("functionConfig")
	if fc == nil || fc.Value.IsNilOrEmpty() {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uninject}\ndata: {uninject: \"true\"}\n"
	}
	cfg := fc.Value.Copy()
	path := []string{"data"}
	value := yaml.NewStringRNode("true")
	if cfg.GetKind() == inject.ConfigKind {
		path, value = []string{"spec"}, yaml.NewScalarRNode("true")
	}
	if err := cfg.PipeE(yaml.LookupCreate(yaml.MappingNode, path...), yaml.SetField("uninject", value)); err != nil {
		t.Fatal(err)
	}
	return cfg.MustString()
}

// withConfig replaces the ResourceList's function config.
func withConfig(t *testing.T, rl []byte, config string) []byte {
	t.Helper()
	n, err := yaml.Parse(string(rl))
	if err != nil {
		t.Fatal(err)
	}
	fc, err := yaml.Parse(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PipeE(yaml.SetField("functionConfig", fc)); err != nil {
		t.Fatal(err)
	}
	return []byte(n.MustString())
}

// TestCoreCorpusFileMode runs the core's golden corpus through the
// function's file mode (inject-fn CONFIG FILE): the output is the core's
// expected.yaml, injecting it again changes no byte, and uninject gives the
// input back byte for byte (for inputs without a status record).
func TestCoreCorpusFileMode(t *testing.T) {
	dirs, err := filepath.Glob("../../pkg/inject/testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no core corpus: %v", err)
	}
	defaultConfig := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(defaultConfig, []byte("apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fileMode := func(t *testing.T, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		processor.Main(args, strings.NewReader(""), &out, &errOut)
		return out.String()
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			config := filepath.Join(dir, "config.yaml")
			if _, err := os.Stat(config); err != nil {
				config = defaultConfig
			}
			input, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			out := fileMode(t, config, filepath.Join(dir, "input.yaml"))
			if out != string(want) {
				t.Fatalf("file mode differs from the core's expected.yaml:\n%s", out)
			}
			injected := filepath.Join(t.TempDir(), "injected.yaml")
			if err := os.WriteFile(injected, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if again := fileMode(t, config, injected); again != out {
				t.Errorf("inject(inject(x)) != inject(x):\n%s", again)
			}
			if bytes.Contains(input, []byte(naming.StatusAnnotation)) {
				return
			}
			if back := fileMode(t, "--uninject", config, injected); back != string(input) {
				t.Errorf("uninject(inject(x)) != x:\n%q\nwant:\n%q", back, input)
			}
		})
	}
}
