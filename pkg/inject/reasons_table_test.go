package inject_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestReasonsDocumented fails when docs/selection.md's table of reasons is
// not the one the core's table generates; -update rewrites it.
func TestReasonsDocumented(t *testing.T) {
	mddoc.Generated(t, "docs/selection.md", "reasons", inject.ReasonsMarkdown(), *update, "go test ./pkg/inject -run TestReasonsDocumented -update")
}

// TestReasonRulesComplete: every Reason constant the core declares has
// one row in the table of reasons, and every row a constant.
func TestReasonRulesComplete(t *testing.T) {
	t.Parallel()
	declared := declaredReasons(t)
	var rows []string
	for _, r := range inject.ReasonRules() {
		if slices.Contains(rows, string(r.Reason)) {
			t.Errorf("%s: two rows", r.Reason)
		}
		rows = append(rows, string(r.Reason))
		if !slices.Contains(declared, string(r.Reason)) {
			t.Errorf("%s: a row without a constant", r.Reason)
		}
		if len(r.Outcomes) == 0 || r.When == "" {
			t.Errorf("%s: a row without its outcome or when", r.Reason)
		}
	}
	for _, code := range declared {
		if !slices.Contains(rows, code) {
			t.Errorf("%s: declared, but not in the table of reasons", code)
		}
	}
}

// declaredReasons are the values of the package's constants of type
// Reason, read from its source.
func declaredReasons(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if typ, ok := spec.Type.(*ast.Ident); !ok || typ.Name != "Reason" {
				return true
			}
			for _, v := range spec.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					code, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, code)
				}
			}
			return true
		})
	}
	if len(out) < 10 {
		t.Fatalf("found %d Reason constants, want every one the core declares", len(out))
	}
	return out
}
