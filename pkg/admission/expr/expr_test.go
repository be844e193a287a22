package expr_test

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
)

func TestFoldingAndPrecedence(t *testing.T) {
	t.Parallel()
	x, y, z := expr.Var("x"), expr.Var("y"), expr.Var("z")
	for _, tc := range []struct {
		name string
		e    expr.Expr
		want string
	}{
		{"true && x is x", expr.And(expr.True, x), "variables.x"},
		{"false && x is false", expr.And(x, expr.False), "false"},
		{"false || x is x", expr.Or(expr.False, x), "variables.x"},
		{"true || x is true", expr.Or(x, expr.True), "true"},
		{"and of nothing", expr.And(), "true"},
		{"nested and flattened", expr.And(x, expr.And(y, z)), "variables.x && variables.y && variables.z"},
		{"or inside and", expr.And(x, expr.Or(y, z)), "variables.x && (variables.y || variables.z)"},
		{"and inside or", expr.Or(x, expr.And(y, z)), "variables.x || variables.y && variables.z"},
		{"not of a constant", expr.Not(expr.True), "false"},
		{"double negation", expr.Not(expr.Not(x)), "variables.x"},
		{"not of an and", expr.Not(expr.And(x, y)), "!(variables.x && variables.y)"},
		{"constant condition", expr.Cond(expr.True, x, y), "variables.x"},
		{"same branches", expr.Cond(z, x, x), "variables.x"},
		{"negated condition swapped", expr.Cond(expr.Not(z), x, y), "variables.z ? variables.y : variables.x"},
		{"conditional chain", expr.Cond(x, expr.Str("a"), expr.Cond(y, expr.Str("b"), expr.Str(""))), `variables.x ? "a" : variables.y ? "b" : ""`},
		{"conditional in a condition", expr.Cond(expr.Cond(x, y, z), x, y), "(variables.x ? variables.y : variables.z) ? variables.x : variables.y"},
		{"[] + x is x", expr.Concat(expr.List(), x), "variables.x"},
		{"literals joined", expr.Concat(expr.Str("a"), expr.Str("b"), x, expr.List(), expr.Str("")), `"ab" + variables.x`},
		{"list literals joined", expr.Concat(expr.List(x), expr.List(y)), "[variables.x, variables.y]"},
		{"lists of nothing", expr.Lists(), "[]"},
		{"when on a constant", expr.When(expr.False, expr.List(x)), "[]"},
		{"sum inside a relation", expr.Eq(expr.Concat(x, y), z), "variables.x + variables.y == variables.z"},
		{"relation inside a sum", expr.Concat(expr.Str("a"), expr.Cond(x, y, z)), `"a" + (variables.x ? variables.y : variables.z)`},
		{"minus is left-associative", expr.Sub(x, expr.Sub(y, z)), "variables.x - (variables.y - variables.z)"},
		{"member of a sum", expr.Method(expr.Concat(x, y), "size"), "(variables.x + variables.y).size()"},
		{"field or index", expr.Field(expr.Field(expr.Object, "metadata"), "app.kubernetes.io/name"), `object.metadata["app.kubernetes.io/name"]`},
		{"has of a key", expr.Has(expr.Var("m"), "a/b"), `"a/b" in variables.m`},
		{"optional", expr.Method(expr.OptIndex(expr.OptField(expr.Object, "metadata"), expr.Str("k")), "orValue", expr.Str("")), `object.?metadata[?"k"].orValue("")`},
		{"raw is one operand", expr.Not(expr.Raw("a || b")), "!(a || b)"},
		{"format", expr.Format("%s: %s is used", expr.Str("spec"), x), `"spec: " + variables.x + " is used"`},
		{"patch", expr.JSONPatch(expr.Str("/a"), x), `JSONPatch{op: "add", path: "/a", value: variables.x}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := expr.Text(tc.e); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestPrettyFolds(t *testing.T) {
	t.Parallel()
	long := expr.Str("a message long enough that the conditional chain cannot be written on one line")
	e := expr.Cond(expr.Var("first"), long, expr.Cond(expr.Var("second"), long, expr.Str("")))
	// One case per line.
	want := `variables.first ? "a message long enough that the conditional chain cannot be written on one line" :
variables.second ? "a message long enough that the conditional chain cannot be written on one line" :
""`
	if got := expr.Pretty(e); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	short := expr.And(expr.Var("a"), expr.Var("b"))
	if got := expr.Pretty(short); got != "variables.a && variables.b" {
		t.Errorf("a short expression is folded: %s", got)
	}
}
