package podexpr

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
)

// The tests compile with cel-go in the process; helper_test.go runs the
// same through the helper's protocol.
func init() { Use(celgo.Compile) }

var update = flag.Bool("update", false, "rewrite expressions.json")

// defaultExpressions are the expressions of the embedded default template
// (pkg/inject/default_template.yaml), by parameter annotation.
func defaultExpressions(t testing.TB) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../default_template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Parameters []struct {
			Annotation string `yaml:"annotation"`
			Expression string `yaml:"expression"`
		} `yaml:"parameters"`
	}
	if err := yaml.Unmarshal(data, &tmpl); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range tmpl.Parameters {
		if p.Expression != "" {
			out[p.Annotation] = p.Expression
		}
	}
	if len(out) == 0 {
		t.Fatal("the default template has no expression: the test reads the wrong file")
	}
	return out
}

// defaultPort is the expression of the default's app-port parameter.
func defaultPort(t testing.TB) string {
	t.Helper()
	text, ok := defaultExpressions(t)["app-port"]
	if !ok {
		t.Fatal("the default template has no app-port expression")
	}
	return text
}

// TestPrecompiledExpressions: expressions.json holds exactly the checked
// ASTs of the embedded default's expressions as this cel-go compiles them.
func TestPrecompiledExpressions(t *testing.T) {
	want := map[string]string{}
	for annotation, text := range defaultExpressions(t) {
		b64, err := celgo.CompileChecked(text)
		if err != nil {
			t.Fatalf("%s: %v", annotation, err)
		}
		want[text] = b64
	}
	data, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *update {
		if err := os.WriteFile("expressions.json", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("expressions.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data) {
		t.Errorf("expressions.json is stale (go test ./pkg/inject/podexpr -run TestPrecompiledExpressions -update rewrites it)")
	}
}

// TestDefaultExpressionsFast: every expression of the embedded default is
// in the subset and precompiled, so the default path runs no cel-go.
func TestDefaultExpressionsFast(t *testing.T) {
	for annotation, text := range defaultExpressions(t) {
		if !New(text).Fast() {
			t.Errorf("%s: the expression is not in the subset, or not precompiled", annotation)
		}
	}
	if New("'A'.lowerAscii()").Fast() {
		t.Error("an expression outside the subset is called fast")
	}
}

// TestFastCompilesNothing: asking whether an expression is fast compiles
// nothing (kubectl-inject asks it to decide which binary serves a
// template, before any helper runs).
func TestFastCompilesNothing(t *testing.T) {
	var compiled int
	Use(func(text, checked string) (Program, error) {
		compiled++
		return celgo.Compile(text, checked)
	})
	defer Use(celgo.Compile)
	if New("object.kind == 'Deployment' ? 'd' : 'o'").Fast() {
		t.Error("an expression not precompiled is called fast")
	}
	if compiled != 0 {
		t.Errorf("Fast compiled %d expressions", compiled)
	}
}
