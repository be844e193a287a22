package admission

import (
	"fmt"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// This file holds the checks of the override annotations' values: the
// first cases of the refusal chain, each with the core's message.

// badValueChecks are the first cases of the conflict chain: an override
// value that does not match its type. The core fails the object with this
// message before anything else, and the Pod is left as created. A run of
// parameters with nothing more to check (no expression, no port) is one
// table, badOverrides, read in the core's order.
func (c *compiler) badValueChecks() []check {
	var out []check
	plain := func(p param) bool {
		return p.computed == nil && c.portTaken(p) == nil && strconv.Quote(p.key) == `"`+p.key+`"`
	}
	var kinds expr.Expr // overrideTypes, declared with the first table
	table := func(run []param) {
		if kinds == nil {
			kinds = c.overrideTypes(plain)
		}
		out = append(out, c.badOverrideTable(run, kinds))
	}
	one := func(p param) {
		msg := expr.Format(inject.MessageBadOverride, expr.Str("metadata.annotations"), expr.Str(strconv.Quote(p.key)),
			goQuoted(p.val), expr.Str(p.Type.Example()), expr.Str(p.Field))
		annotated := p.set
		if p.computed != nil {
			annotated = p.ann
		}
		out = append(out, check{expr.And(annotated, expr.Not(expr.Method(p.val, "matches", expr.Str(p.Type.Pattern())))), msg})
		out = append(out, c.overridePortChecks(p, annotated)...)
		if p.computed != nil {
			out = append(out, c.computedValueChecks(p)...)
		}
	}
	for _, p := range c.params {
		c.nameLiteral(p.Type.Pattern(), camel(string(p.Type))+"Pattern", "the pattern of a "+string(p.Type)+" value, as the core checks it")
	}
	plainRuns(c.params, plain, table, one)
	return out
}

// computedValueChecks check the value a parameter's expression gives: of
// the parameter's type and, for a string, matching its pattern, with the
// core's messages.
func (c *compiler) computedValueChecks(p param) []check {
	at := expr.Str(fmt.Sprintf("parameters: %s: %s: expression: ", p.Annotation, p.Field))
	computed := expr.And(expr.Not(p.ann), expr.Ne(p.computed, expr.Null))
	out := []check{{expr.And(computed, expr.Ne(expr.Call("type", p.computed), expr.Ident(celTypeOf(p.Type)))),
		expr.Concat(at, expr.Str(template.ExpressionTypeError(p.Type)))}}
	if p.Type != template.TypeInt {
		// A port is checked as a string is: string() of the int.
		out = append(out, check{expr.And(computed, expr.Not(expr.Method(p.val, "matches", expr.Str(p.Type.Pattern())))),
			expr.Concat(at, expr.Str(`"`), goQuoted(p.val), expr.Str(`" is not `+p.Type.Example()))})
	}
	return out
}

// overrideTypes declares the map of the types of the parameters plain
// accepts (those the tables check) to their pattern and example, each
// written once: {"quantity": [pattern, "a resource quantity such as ..."]}.
func (c *compiler) overrideTypes(plain func(param) bool) expr.Expr {
	var types []string
	var values []expr.Expr
	seen := map[template.ParameterType]bool{}
	for _, p := range c.params {
		if plain(p) && !seen[p.Type] {
			seen[p.Type] = true
			types = append(types, string(p.Type))
			values = append(values, expr.List(expr.Str(p.Type.Pattern()), expr.Str(p.Type.Example())))
		}
	}
	return c.variable(expr.Var(c.names.unique("overrideTypes")),
		"each override type: its pattern, as the core checks it, and what a value must be", expr.Map(types, values))
}

// badOverrideTable is the check of the parameters of run, whose keys share
// one prefix: a table of their names, types and fields, and the first row
// whose annotation the Pod sets to a value that does not match its type's
// pattern (read from kinds, overrideTypes).
func (c *compiler) badOverrideTable(run []param, kinds expr.Expr) check {
	rows := make([]expr.Expr, len(run))
	for i, p := range run {
		rows[i] = expr.List(expr.Str(p.Annotation), expr.Str(string(p.Type)), expr.Str(p.Field))
	}
	o := expr.Ident("o")
	at := func(i int64) expr.Expr { return expr.Index(o, expr.Int(i)) }
	key := expr.Concat(expr.Str(annotationPrefix(run[0])), at(0))
	value := expr.Index(annotations, key)
	kind := expr.Index(kinds, at(1))
	bad := c.variable(expr.Var(c.names.unique("badOverrides")),
		"the override annotations the Pod sets to a bad value, in the core's order: [name, type, field]",
		expr.Method(expr.List(rows...), "filter", o, expr.And(expr.In(key, annotations),
			expr.Not(expr.Method(value, "matches", expr.Index(kind, expr.Int(0)))))))
	// The key needs no escaping (the table holds only such keys): %q of
	// it is the key between quotes.
	msg := expr.Format(inject.MessageBadOverride, expr.Str("metadata.annotations"), expr.Quoted(key), goQuoted(value),
		expr.Index(kind, expr.Int(1)), at(2))
	return check{expr.And(expr.Has(metadata, "annotations"), expr.Gt(expr.Call("size", bad), expr.Int(0))), firstOf(bad, o, msg)}
}

// overridePortChecks refuse an override of a port parameter that names one
// of the sidecars' ports, with the core's message.
func (c *compiler) overridePortChecks(p param, annotated expr.Expr) []check {
	taken := c.portTaken(p)
	if taken == nil {
		return nil
	}
	s := expr.Ident("s")
	msg := expr.Format(inject.MessagePortValue, expr.Str("metadata.annotations"), expr.Str(strconv.Quote(p.key)),
		expr.Quoted(expr.Index(s, expr.Int(0))), expr.Quoted(expr.Index(s, expr.Int(1))), expr.Index(s, expr.Int(2)))
	return []check{{expr.And(annotated, expr.Gt(expr.Call("size", taken), expr.Int(0))), firstOf(taken, s, msg)}}
}

// portTaken declares, for a port parameter, the variable holding the
// sidecar port its value names, as the core's PortTaken finds it: a list
// of one [port, container, what binds it], or none. nil for a parameter
// of another type, or a template whose sidecars use no TCP port.
func (c *compiler) portTaken(p param) expr.Expr {
	if p.Type != template.TypePort || len(c.in.Template().PortValues()) == 0 {
		return nil
	}
	name := p.name + "Taken"
	if c.declares(name) {
		return expr.Var(name)
	}
	var rows []expr.Expr
	for _, sp := range c.in.Template().PortValues() {
		rows = append(rows, expr.List(expr.Str(strconv.Itoa(sp.Port)), expr.Str(sp.Container), expr.Str(sp.What)))
	}
	s := expr.Ident("s")
	return c.variable(expr.Var(name), "the sidecar port "+p.key+" names, if any: [port, container, what binds it]",
		expr.Method(expr.List(rows...), "filter", s, expr.Eq(expr.Index(s, expr.Int(0)), p.val)))
}

// firstOf is the message of the first item of the list xs, v being the
// item in msg: xs.map(v, msg)[0].
func firstOf(xs, v, msg expr.Expr) expr.Expr {
	return expr.Index(expr.Method(xs, "map", v, msg), expr.Int(0))
}

// celTypeOf is the CEL type an expression of a parameter of type pt gives.
func celTypeOf(pt template.ParameterType) string {
	if pt.Integer() {
		return "int"
	}
	return "string"
}
