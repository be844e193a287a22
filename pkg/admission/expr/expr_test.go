package expr_test

import (
	"strconv"
	"strings"
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
		{"not of an and is the or of the nots", expr.Not(expr.And(x, y)), "!variables.x || !variables.y"},
		{"not of an or is the and of the nots", expr.Not(expr.Or(x, expr.Not(y))), "!variables.x && variables.y"},
		{"not of == is !=", expr.Not(expr.Eq(x, y)), "variables.x != variables.y"},
		{"not of != is ==", expr.Not(expr.Ne(x, expr.Null)), "variables.x == null"},
		{"not of a call stays", expr.Not(expr.Call("has", x)), "!has(variables.x)"},
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

// TestPrettyFillsItems puts the short items of a list or map that does
// not fit on one line on shared lines, gives a multi-line item lines of
// its own, and lets the brackets hug items that each fit on a line.
func TestPrettyFillsItems(t *testing.T) {
	t.Parallel()
	word := func(i int) expr.Expr { return expr.Str(strings.Repeat(string(rune('a'+i)), 30)) }
	var words []expr.Expr
	for i := range 5 {
		words = append(words, word(i))
	}
	long := expr.Cond(expr.Var("first"), expr.Str(strings.Repeat("x", 60)), expr.Str(strings.Repeat("y", 60)))
	e := expr.Call("dyn", expr.List(append(words, long, word(5))...))
	q := func(i int) string { return strconv.Quote(strings.Repeat(string(rune('a'+i)), 30)) }
	want := "dyn([\n" +
		"  " + q(0) + ", " + q(1) + ", " + q(2) + ",\n" +
		"  " + q(3) + ", " + q(4) + ",\n" +
		"  variables.first ? \"" + strings.Repeat("x", 60) + "\" :\n  \"" + strings.Repeat("y", 60) + "\",\n" +
		"  " + q(5) + "\n" +
		"])"
	if got := expr.Pretty(e); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Items that each fit on a line: the brackets hug them.
	hugged := expr.Call("dyn", expr.List(words...))
	want = "dyn([" + q(0) + ", " + q(1) + ", " + q(2) + ",\n" +
		"  " + q(3) + ", " + q(4) + "])"
	if got := expr.Pretty(hugged); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestReplaceString replaces a string literal wherever it is written
// (operands, arguments, branches, list items and map values) and no other
// literal, even one that holds it.
func TestReplaceString(t *testing.T) {
	t.Parallel()
	long, v := "a\nlong \"text\"", expr.Var("bound")
	e := expr.Cond(expr.Eq(expr.Var("x"), expr.Str(long)),
		expr.List(expr.Map([]string{"k"}, []expr.Expr{expr.Str(long)}), expr.Str("other")),
		expr.List(expr.Method(expr.Var("s"), "matches", expr.Str(long)), expr.Str(long+"!"), expr.Not(expr.Method(expr.Str(long), "contains", expr.Str("x")))))
	got, n := expr.ReplaceString(e, long, v)
	want := `variables.x == variables.bound ? [{"k": variables.bound}, "other"] : ` +
		`[variables.s.matches(variables.bound), "a\nlong \"text\"!", !variables.bound.contains("x")]`
	if n != 4 || expr.Text(got) != want {
		t.Errorf("replaced %d:\n%s\nwant 4:\n%s", n, expr.Text(got), want)
	}
	if _, n := expr.ReplaceString(e, "absent", v); n != 0 {
		t.Errorf("replaced %d of a literal that is not there", n)
	}
}
