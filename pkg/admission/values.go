package admission

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// This file writes the status record's values field: the override
// annotations the Pod sets, as the core records them.

// valuesField is the record's values, a string: the override annotations
// that are set, by parameter name (sorted, as encoding/json sorts map
// keys), or "" when none is.
func (c *compiler) valuesField() expr.Expr {
	byName := map[string]param{}
	for _, p := range c.params {
		byName[p.Annotation] = p
	}
	sorted := make([]param, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		sorted = append(sorted, byName[n])
	}
	// A Pod without annotations sets none: only the values that
	// expressions compute are recorded, and no annotation is read. The
	// others are a variable, read only where the Pod has annotations.
	var parts, computed []expr.Expr
	plain := func(p param) bool {
		return p.computed == nil && p.Type != template.TypeString && isPlainName(p.Annotation)
	}
	table := func(run []param) { parts = append(parts, plainValues(run)) }
	one := func(p param) {
		value := p.val
		if p.Type == template.TypeString {
			// The other types' patterns admit no character JSON escapes,
			// and a value that does not match them is never recorded.
			value = c.jsonEscaped(value)
		}
		set := p.set
		if p.computed == nil {
			set = expr.Method(p.override, "hasValue")
		}
		part := expr.When(set, expr.List(expr.Concat(expr.Str(jsonString(p.Annotation)+`:"`), value, expr.Str(`"`))))
		parts = append(parts, part)
		if p.computed != nil {
			computed = append(computed, part)
		}
	}
	plainRuns(sorted, plain, table, one)
	if len(computed) == len(parts) {
		return jsonObjectField("values", expr.Lists(parts...))
	}
	values := c.variable(expr.Var("values"), "the override values the record lists, as JSON pairs (read where the Pod has annotations)", expr.Lists(parts...))
	return expr.Cond(expr.Has(metadata, "annotations"), jsonObjectField("values", values), jsonObjectField("values", expr.Lists(computed...)))
}

// plainValues is the record's pairs of the override annotations of run
// (one prefix) that the Pod sets: names.filter(n, KEY in
// annotations).map(n, "n":"V"). Their values need no JSON escaping (their
// patterns admit no character it escapes, and a value that does not match
// is never recorded).
func plainValues(run []param) expr.Expr {
	n := expr.Ident("n")
	key := expr.Concat(expr.Str(annotationPrefix(run[0])), n)
	list := make([]expr.Expr, len(run))
	for i, p := range run {
		list[i] = expr.Str(p.Annotation)
	}
	pair := expr.Concat(expr.Str(`"`), n, expr.Str(`":"`), expr.Index(annotations, key), expr.Str(`"`))
	return expr.Method(expr.Method(expr.List(list...), "filter", n, expr.In(key, annotations)), "map", n, pair)
}

// annotationPrefix is the part of p's annotation key before its name:
// "sidecar.kinject.dev/", a profile's "mesh.sidecar.kinject.dev/", or ""
// for a name that is a whole key (example.com/log-image).
func annotationPrefix(p param) string {
	return strings.TrimSuffix(p.key, p.Annotation)
}

// plainRuns calls table with each run of consecutive parameters that
// plain accepts and whose annotation keys share one prefix, and one with
// every other parameter, in the order of params: the checks and the
// record read a run from one list.
func plainRuns(params []param, plain func(param) bool, table func(run []param), one func(param)) {
	var run []param
	flush := func() {
		if len(run) > 0 {
			table(run)
			run = nil
		}
	}
	for _, p := range params {
		if !plain(p) {
			flush()
			one(p)
			continue
		}
		if len(run) > 0 && annotationPrefix(run[0]) != annotationPrefix(p) {
			flush()
		}
		run = append(run, p)
	}
	flush()
}

// isPlainName reports whether a parameter's name is written in JSON and
// in CEL as itself (letters, digits, '-', '.', '_').
func isPlainName(n string) bool {
	return jsonString(n) == strconv.Quote(n)
}
