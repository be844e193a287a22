package inject_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestPrecompiledExpressions: expressions.json holds exactly the checked
// ASTs of the embedded default's expressions as this cel-go compiles them.
func TestPrecompiledExpressions(t *testing.T) {
	want := map[string]string{}
	for _, p := range inject.DefaultTemplate().Parameters {
		if p.Expression == "" {
			continue
		}
		b64, err := inject.CompileExpression(p.Expression)
		if err != nil {
			t.Fatalf("%s: %v", p.Annotation, err)
		}
		want[p.Expression] = b64
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
		t.Errorf("expressions.json is stale (go test ./pkg/inject -run TestPrecompiledExpressions -update rewrites it)")
	}
}
