package admission

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
)

// TestTypedLiterals writes out the CEL of template values and their
// types: one type needs no dyn(); mixed types, and no values at all, are
// dyn, each value wrapped (the API server's CEL checks aggregate literals
// as homogeneous, TestMixedLiteralsNeedDyn).
func TestTypedLiterals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		value    any
		cel, typ string
	}{
		{"a string", "a", `"a"`, "string"},
		{"a whole float", float64(3), `3`, "int"},
		{"a fraction", 2.5, `(2.5)`, "double"},
		{"a list of one type", []any{1, 2}, `[1, 2]`, "list(int)"},
		{"an empty list", []any{}, `[]`, "list(dyn)"},
		{"a list of two types", []any{1, "a"}, `[dyn(1), dyn("a")]`, "list(dyn)"},
		{"a map of one type", map[string]any{"cpu": "1", "memory": "2"}, `{"cpu": "1", "memory": "2"}`, "map(string, string)"},
		{"an empty map", map[string]any{}, `{}`, "map(string, dyn)"},
		{"a map of two types", map[string]any{"a": 1, "b": "x"}, `{"a": dyn(1), "b": dyn("x")}`, "map(string, dyn)"},
		{"null", nil, `null`, "null"},
	} {
		e, typ, err := typedLiteral(c.value)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := expr.Text(e); got != c.cel || typ != c.typ {
			t.Errorf("%s: %s of type %s, want %s of type %s", c.name, got, typ, c.cel, c.typ)
		}
	}
	if _, _, err := typedLiteral(struct{}{}); err == nil {
		t.Error("a value of no YAML type was written")
	}
}

// TestCamel: a variable name made of the words of a name, never empty,
// never starting with a digit, ASCII only.
func TestCamel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"envoy-conf":      "envoyConf",
		"example.com/cpu": "exampleComCpu",
		"-lead":           "lead",
		"9lives":          "x9lives",
		"a-9":             "a9",
		"":                "x",
		"--":              "x",
		"ünï-côde":        "nCDe",
		"a\u007fb":        "aB",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUniqueNames: a taken name gets the next free number, from 2.
func TestUniqueNames(t *testing.T) {
	t.Parallel()
	n := names{}
	var got []string
	for range 4 {
		got = append(got, n.unique("ports"))
	}
	got = append(got, n.unique("ports2x"), n.unique("other"))
	if want := []string{"ports", "ports2", "ports3", "ports4", "ports2x", "other"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestLongStrings: an item's strings from longLiteral characters on are
// offered once each, named for the item and the flag or field holding
// them; bindRepeated binds those written twice or more, first, and
// leaves those written once in place.
func TestLongStrings(t *testing.T) {
	t.Parallel()
	long := func(c byte, n int) string { return strings.Repeat(string(c), n) }
	first, bootstrap, twice, once, short := long('f', 250), long('b', longLiteral), long('t', 300), long('o', 300), long('s', longLiteral-1)
	c := &compiler{names: names{}}
	c.nameLongStrings(item{list: "containers", name: "envoy-proxy", value: map[string]any{
		"args":  []any{first, "--config-yaml", bootstrap, "-l", short, "--config-yaml", first},
		"env":   []any{map[string]any{"name": "X", "value": twice}},
		"image": once,
	}})
	c.nameLiteral(twice, "again", "offered again")
	var got []string
	for _, l := range c.literals {
		got = append(got, fmt.Sprintf("%s %c%d", l.name, l.text[0], len(l.text)))
	}
	if want := []string{"envoyProxyArgs f250", "envoyProxyConfigYaml b200", "envoyProxyValue t300", "envoyProxyImage o300"}; !slices.Equal(got, want) {
		t.Fatalf("offered %q, want %q", got, want)
	}
	if upperFirst("") != "" || upperFirst("ab") != "Ab" {
		t.Errorf("upperFirst: %q %q", upperFirst(""), upperFirst("ab"))
	}
	// The bootstrap once in a variable and once in the patch, the other
	// twice in the patch, the last once.
	c.vars = []variable{{name: "first", value: expr.Str(bootstrap)}}
	patch := c.bindRepeated(expr.List(expr.Str(bootstrap), expr.Str(twice), expr.Str(twice), expr.Str(once)))
	var declared []string
	for _, v := range c.vars {
		declared = append(declared, v.name+"="+expr.Text(v.value)[:3])
	}
	if want := []string{`envoyProxyConfigYaml="bb`, `envoyProxyValue="tt`, "first=var"}; !slices.Equal(declared, want) {
		t.Errorf("variables %q, want %q", declared, want)
	}
	if got, want := expr.Text(patch), `[variables.envoyProxyConfigYaml, variables.envoyProxyValue, variables.envoyProxyValue, "`+once+`"]`; got != want {
		t.Errorf("patch %.120s, want %.120s", got, want)
	}
}
