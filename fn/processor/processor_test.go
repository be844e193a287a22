package processor_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/fn/processor"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*/expected.yaml from the current output")

// TestGolden runs every testdata/<case>: input.yaml is a ResourceList,
// config.yaml (optional) becomes its functionConfig, expected.yaml is the
// exact output. A case fails (exits non-zero) exactly when its output has
// an error result. Running the output again must not change its items.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			in := readInput(t, dir)
			out, runErr := run(t, in)
			golden := filepath.Join(dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("output differs from %s (run go test ./fn/processor -update to accept):\n--- got\n%s", golden, out)
			}
			if hasError := bytes.Contains(out, []byte("severity: error")); hasError != (runErr != nil) {
				t.Errorf("error results: %v, but Run returned %v", hasError, runErr)
			}
			t.Run("idempotent", func(t *testing.T) {
				again, _ := run(t, withoutResults(t, out))
				if got, want := items(t, again), items(t, out); got != want {
					t.Errorf("second run changed the items:\n--- first\n%s\n--- second\n%s", want, got)
				}
			})
		})
	}
}

func TestRunRejectsPlainYAML(t *testing.T) {
	var out bytes.Buffer
	err := processor.Run(processor.Processor{}, strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "not a ResourceList") {
		t.Fatalf("Run on plain YAML: err = %v, want not a ResourceList", err)
	}
	if out.Len() != 0 {
		t.Errorf("Run wrote output for a bad input: %q", out.String())
	}
}

func readInput(t *testing.T, dir string) []byte {
	t.Helper()
	rl, err := composeInput(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}

// composeInput reads a golden case's ResourceList: input.yaml with
// config.yaml, when there is one, as its functionConfig.
func composeInput(dir string) ([]byte, error) {
	in, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
	if err != nil {
		return nil, err
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if os.IsNotExist(err) {
		return in, nil
	}
	if err != nil {
		return nil, err
	}
	rl, err := yaml.Parse(string(in))
	if err != nil {
		return nil, err
	}
	fc, err := yaml.Parse(string(cfg))
	if err != nil {
		return nil, err
	}
	if err := rl.PipeE(yaml.SetField("functionConfig", fc)); err != nil {
		return nil, err
	}
	return []byte(rl.MustString()), nil
}

func run(t *testing.T, in []byte) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	err := processor.Run(processor.Processor{}, bytes.NewReader(in), &out)
	if out.Len() == 0 {
		t.Fatalf("Run wrote nothing: %v", err)
	}
	return out.Bytes(), err
}

func withoutResults(t *testing.T, rl []byte) []byte {
	t.Helper()
	n, err := yaml.Parse(string(rl))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PipeE(yaml.Clear("results")); err != nil {
		t.Fatal(err)
	}
	return []byte(n.MustString())
}

func items(t *testing.T, rl []byte) string {
	t.Helper()
	n, err := yaml.Parse(string(rl))
	if err != nil {
		t.Fatal(err)
	}
	return n.Field("items").Value.MustString()
}
