package admission

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// param is one override parameter of the template, as the policy reads it:
// the Pod's annotation key, checked with the core's own pattern.
type param struct {
	inject.Parameter
	key string // the full annotation key for the profile
	// override is the Pod's annotation, an optional: for a parameter with
	// an expression, the variable holding it (appPortOverride), read by
	// the variables that compute its value; for the others, the lookup
	// itself, read where the value is used (a lookup costs less than a
	// variable's accessor). set and val say whether the Pod has it and
	// give its value ("" when it has none).
	override, set, val expr.Expr
	// name is the stem of the parameter's variables (appPort).
	name string
	// ann and computed are, for a parameter with an expression, whether the
	// Pod has the annotation and the variable holding the expression's
	// value (the template's text); then set and val are variables: true
	// when either gives a value, and that value as a string. nil for the
	// others.
	ann, computed expr.Expr
	// setIsVal: set is val != "" (no valid value of the type is "").
	setIsVal bool
	// effective is the value the field takes, the annotation's or the
	// template's, for a string field; nil for the others.
	effective expr.Expr
	orig      any // the template's value of the field
}

// hole is a parameter's place in a template item: the template's value,
// replaced by the annotation's value when the Pod has one. prefix is the
// flag of an args word written --flag=VALUE.
type hole struct {
	p      *param
	orig   any
	prefix string
}

// intPattern is the core's check for a value that keeps an integer field an
// integer (typedScalar): a canonical decimal integer.
var intPattern = inject.TypeInt.Pattern()

// loadParams binds every parameter to its place in the template's items.
// The core has already checked each parameter against the template and
// written its default there, so every field is found: one that is not is
// an error of the template, not of the Pod.
func (c *compiler) loadParams(params []inject.Parameter) error {
	c.params = make([]param, len(params))
	if c.names == nil {
		c.names = names{}
	}
	for i, p := range params {
		name := c.names.unique(camel(p.Annotation))
		key := inject.ProfileAnnotation(c.profile, p.Annotation)
		override := expr.OptIndex(expr.OptField(metadata, "annotations"), expr.Str(key))
		if p.Expression != "" {
			override = expr.Var(name + "Override")
		}
		c.params[i] = param{
			Parameter: p,
			key:       key,
			name:      name,
			override:  override,
			// The override is an optional: none on a Pod without
			// annotations, so no has() guard is needed before it.
			set: expr.Method(override, "hasValue"),
			val: expr.Method(override, "orValue", expr.Str("")),
		}
		if p.Expression != "" {
			c.params[i].ann, c.params[i].computed = c.params[i].set, expr.Var(name+"Computed")
			c.params[i].set, c.params[i].val = expr.Var(name+"Set"), expr.Var(name)
			if !regexp.MustCompile(p.Type.Pattern()).MatchString("") {
				// No valid value is "": where the Pod is injected (no
				// conflict named a bad value), set is val != "", and
				// needs no variable of its own.
				c.params[i].set, c.params[i].setIsVal = expr.Ne(c.params[i].val, expr.Str("")), true
			}
		}
	}
	for i := range c.params {
		p := &c.params[i]
		list, name := p.Target()
		found := false
		for j := range c.items {
			it := &c.items[j]
			// The core sets the field in every item of that name: a sidecar
			// is found in containers or initContainers alike.
			if it.name != name || (list == "volumes") != it.isVolume() {
				continue
			}
			if err := placeHole(it.value, p.Path(), p); err != nil {
				return fmt.Errorf("template: parameters: %s: %s: %w", p.Annotation, p.Field, err)
			}
			found = true
		}
		if !found {
			return fmt.Errorf("template: parameters: %s: %s: the template has no %s named %q", p.Annotation, p.Field, strings.TrimSuffix(list, "s"), name)
		}
	}
	for j := range c.items {
		lit, err := literal(c.items[j].value)
		if err != nil {
			return fmt.Errorf("template: %s %q: %w", c.items[j].list, c.items[j].name, err)
		}
		c.items[j].lit = lit
	}
	return nil
}

// placeHole replaces the scalar at steps below node (a decoded template
// item) with a hole for p. A step with a key selects a list item by name,
// or in a list of words (args) the word after the flag or --flag=VALUE,
// as the core's getPath and setPath do.
func placeHole(node any, steps []inject.FieldStep, p *param) error {
	for i, st := range steps {
		last := i == len(steps)-1
		m, ok := node.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: the parent is not a mapping", st.Field)
		}
		next, ok := m[st.Field]
		if !ok {
			return fmt.Errorf("%s: not set in the template", st.Field)
		}
		if !st.HasKey {
			if !last {
				node = next
				continue
			}
			if isListOrMap(next) || next == nil {
				return fmt.Errorf("%s: is not a single value", st.Field)
			}
			m[st.Field] = hole{p: p, orig: next}
			if s, ok := next.(string); ok {
				p.setEffective(s)
			}
			return nil
		}
		list, ok := next.([]any)
		if !ok {
			return fmt.Errorf("%s: is not a list", st.Field)
		}
		if last && isWordList(list) {
			idx, prefix := flagWord(list, st.Key)
			if idx < 0 {
				return fmt.Errorf("%s: flag %s not in the template", st.Field, st.Key)
			}
			list[idx] = hole{p: p, orig: list[idx], prefix: prefix}
			if s, ok := list[idx].(hole).orig.(string); ok && prefix == "" {
				p.setEffective(s)
			}
			return nil
		}
		if last {
			return fmt.Errorf("%s[%s]: is not a single value", st.Field, st.Key)
		}
		node = nil
		for _, e := range list {
			if em, ok := e.(map[string]any); ok && em["name"] == st.Key {
				node = em
				break
			}
		}
		if node == nil {
			return fmt.Errorf("%s: no item named %q in the template", st.Field, st.Key)
		}
	}
	return fmt.Errorf("no field")
}

// setEffective sets the value the field takes, from s, the template's
// string, once: the first field the parameter sets.
func (p *param) setEffective(s string) {
	if p.effective != nil {
		return
	}
	p.orig = s
	switch {
	case p.setIsVal:
		p.effective = expr.Cond(p.set, p.val, expr.Str(s)) // val is a string variable
	case p.computed != nil:
		p.effective = expr.Var(strings.TrimPrefix(expr.Text(p.val), "variables.") + "Value")
	default:
		// string(): an annotation's value is typed dyn. The optional
		// gives the template's value without annotations.
		p.effective = expr.Call("string", expr.Method(p.override, "orValue", expr.Str(s)))
	}
}

// isWordList reports whether list holds only scalars (args, command).
func isWordList(list []any) bool {
	for _, e := range list {
		if isListOrMap(e) {
			return false
		}
	}
	return true
}

// flagWord finds the word holding the flag's value: --flag=V (prefix
// --flag=) or the word after --flag.
func flagWord(list []any, flag string) (int, string) {
	for i, e := range list {
		w := fmt.Sprint(e)
		if h, ok := e.(hole); ok {
			w = fmt.Sprint(h.orig)
		}
		switch {
		case strings.HasPrefix(w, flag+"="):
			return i, flag + "="
		case w == flag && i+1 < len(list):
			return i + 1, ""
		}
	}
	return -1, ""
}

// addParamVariables declares, for every parameter, the Pod's annotation
// and, for one with an expression, the value it takes.
func (c *compiler) addParamVariables() {
	for _, p := range c.params {
		if p.computed == nil {
			continue
		}
		c.variable(p.override, "the Pod's "+p.key+", if it sets it", expr.OptIndex(expr.OptField(metadata, "annotations"), expr.Str(p.key)))
		// The template's own text: the core evaluates the same over the
		// pod template. The annotation wins; null keeps the template's
		// value; string() of an int is its decimal form, as the core
		// writes it.
		c.variable(p.computed, "the value of "+p.Field+" the template's expression computes from the Pod",
			expr.Raw(strings.TrimSpace(p.Expression)))
		if !p.setIsVal {
			c.variable(p.set, p.key+" is set, or the expression gives a value", expr.Or(p.ann, expr.Ne(p.computed, expr.Null)))
		}
		c.variable(p.val, "the annotation's value, or the expression's as a string, or \"\"",
			expr.Cond(p.ann, expr.Method(p.override, "orValue", expr.Str("")),
				expr.Cond(expr.And(expr.Ne(p.computed, expr.Null), expr.Eq(expr.Call("type", p.computed), expr.Ident(celTypeOf(p.Type)))),
					expr.Call("string", p.computed), expr.Str(""))))
		if p.effective != nil && !p.setIsVal {
			// string(): an annotation's value is typed dyn.
			c.variable(p.effective, "the value of "+p.Field+": the annotation's, or the template's",
				expr.Cond(p.set, expr.Call("string", p.val), expr.Str(p.orig.(string))))
		}
	}
}

// badValueChecks are the first cases of the conflict chain: an override
// value that does not match its type. The core fails the object with this
// message before anything else, and the Pod is left as created. A run of
// parameters with nothing more to check (no expression, no port) is one
// table, badOverrides, read in the core's order.
func (c *compiler) badValueChecks() []check {
	var out []check
	var run []param
	flush := func() {
		if len(run) > 0 {
			out = append(out, c.badOverrideTable(run))
			run = nil
		}
	}
	for _, p := range c.params {
		c.nameLiteral(p.Type.Pattern(), camel(string(p.Type))+"Pattern", "the pattern of a "+string(p.Type)+" value, as the core checks it")
		if p.computed == nil && c.portTaken(p) == nil && strconv.Quote(p.key) == `"`+p.key+`"` {
			run = append(run, p)
			continue
		}
		flush()
		msg := expr.Format(inject.MessageBadOverride, expr.Str("metadata.annotations"), expr.Str(strconv.Quote(p.key)),
			goQuoted(p.val), expr.Str(p.Type.Example()), expr.Str(p.Field))
		annotated := p.set
		if p.computed != nil {
			annotated = p.ann
		}
		out = append(out, check{expr.And(annotated, expr.Not(expr.Method(p.val, "matches", expr.Str(p.Type.Pattern())))), msg})
		out = append(out, c.overridePortChecks(p, annotated)...)
		if p.computed == nil {
			continue
		}
		// The expression's value: of the parameter's type and, for a
		// string, matching its pattern, with the core's message.
		at := expr.Str(fmt.Sprintf("parameters: %s: %s: expression %q: ", p.Annotation, p.Field, p.Expression))
		computed := expr.And(expr.Not(p.ann), expr.Ne(p.computed, expr.Null))
		if p.Type != inject.TypeInt {
			// Two messages start with the expression's text: it is
			// written once.
			at = c.variable(expr.Var(c.names.unique(camel(p.Annotation)+"ExpressionError")),
				"the start of the core's messages on the value of "+p.Annotation+"'s expression", at)
		}
		out = append(out, check{expr.And(computed, expr.Ne(expr.Call("type", p.computed), expr.Ident(celTypeOf(p.Type)))),
			expr.Concat(at, expr.Str(inject.ExpressionTypeError(p.Type)))})
		if p.Type != inject.TypeInt {
			// A port is checked as a string is: string() of the int.
			out = append(out, check{expr.And(computed, expr.Not(expr.Method(p.val, "matches", expr.Str(p.Type.Pattern())))),
				expr.Concat(at, expr.Str(`"`), goQuoted(p.val), expr.Str(`" is not `+p.Type.Example()))})
		}
	}
	flush()
	return out
}

// badOverrideTable is the check of the parameters of run: a table of
// their names, types and fields, and the first row whose annotation the
// Pod sets to a value that does not match its type's pattern. Each type's
// pattern and example are written once, in a map beside the table.
func (c *compiler) badOverrideTable(run []param) check {
	prefix := annotationPrefix(run[0])
	var types []string
	patterns := map[string][]expr.Expr{}
	rows := make([]expr.Expr, len(run))
	for i, p := range run {
		key := expr.Str(p.key)
		if prefix != "" && annotationPrefix(p) == prefix {
			key = expr.Str(p.Annotation) // the prefix is added where the row is read
		}
		rows[i] = expr.List(key, expr.Str(string(p.Type)), expr.Str(p.Field))
		if _, ok := patterns[string(p.Type)]; !ok {
			types = append(types, string(p.Type))
			patterns[string(p.Type)] = []expr.Expr{expr.Str(p.Type.Pattern()), expr.Str(p.Type.Example())}
		}
	}
	values := make([]expr.Expr, len(types))
	for i, t := range types {
		values[i] = expr.List(patterns[t]...)
	}
	kinds := c.variable(expr.Var(c.names.unique("overrideTypes")),
		"each override type: its pattern, as the core checks it, and what a value must be",
		expr.Map(types, values))
	o := expr.Ident("o")
	at := func(i int64) expr.Expr { return expr.Index(o, expr.Int(i)) }
	key := at(0)
	if prefix != "" && annotationPrefix(run[len(run)-1]) == prefix && allOfPrefix(run, prefix) {
		key = expr.Concat(expr.Str(prefix), at(0))
	} else {
		// Rows of another prefix keep their whole key: write them all whole.
		for i, p := range run {
			rows[i] = expr.List(expr.Str(p.key), expr.Str(string(p.Type)), expr.Str(p.Field))
		}
	}
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

// allOfPrefix reports whether every parameter's annotation key is prefix
// followed by its name.
func allOfPrefix(run []param, prefix string) bool {
	for _, p := range run {
		if annotationPrefix(p) != prefix {
			return false
		}
	}
	return true
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
	if p.Type != inject.TypePort || len(c.in.Template().PortValues()) == 0 {
		return nil
	}
	name := p.name + "Taken"
	for _, v := range c.vars {
		if v.name == name {
			return expr.Var(name)
		}
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
func celTypeOf(pt inject.ParameterType) string {
	if pt.Integer() {
		return "int"
	}
	return "string"
}

// valuesField is the record's values, a string: the override annotations
// that are set, by parameter name (sorted, as encoding/json sorts map
// keys), or "" when none is.
func (c *compiler) valuesField() expr.Expr {
	byName := map[string]param{}
	for _, p := range c.params {
		byName[p.Annotation] = p
	}
	// A Pod without annotations sets none: only the values that
	// expressions compute are recorded, and no annotation is read. The
	// others are a variable, read only where the Pod has annotations.
	var parts, computed []expr.Expr
	var run []string // plain overrides in a row, of one prefix: read as one table
	flush := func() {
		if len(run) > 0 {
			parts = append(parts, plainValues(run, byName))
			run = nil
		}
	}
	for _, n := range sortedKeys(byName) {
		p := byName[n]
		if p.computed == nil && p.Type != inject.TypeString && isPlainName(n) {
			if len(run) > 0 && annotationPrefix(byName[run[0]]) != annotationPrefix(p) {
				flush() // a run shares its annotations' prefix
			}
			run = append(run, n)
			continue
		}
		flush()
		value := p.val
		if p.Type == inject.TypeString {
			// The other types' patterns admit no character JSON escapes,
			// and a value that does not match them is never recorded.
			value = c.jsonEscaped(value)
		}
		set := p.set
		if p.computed == nil {
			set = expr.Method(p.override, "hasValue")
		}
		part := expr.When(set, expr.List(expr.Concat(expr.Str(jsonString(n)+`:"`), value, expr.Str(`"`))))
		parts = append(parts, part)
		if p.computed != nil {
			computed = append(computed, part)
		}
	}
	flush()
	if len(computed) == len(parts) {
		return jsonObjectField("values", expr.Lists(parts...))
	}
	values := c.variable(expr.Var("values"), "the override values the record lists, as JSON pairs (read where the Pod has annotations)", expr.Lists(parts...))
	return expr.Cond(expr.Has(metadata, "annotations"), jsonObjectField("values", values), jsonObjectField("values", expr.Lists(computed...)))
}

// plainValues is the record's pairs of the override annotations names
// that the Pod sets: names.filter(n, KEY in annotations).map(n, "n":"V").
// Their values need no JSON escaping (their patterns admit no character
// it escapes, and a value that does not match is never recorded).
func plainValues(names []string, byName map[string]param) expr.Expr {
	prefix := expr.Str(annotationPrefix(byName[names[0]]))
	n := expr.Ident("n")
	key := expr.Concat(prefix, n)
	list := make([]expr.Expr, len(names))
	for i, name := range names {
		list[i] = expr.Str(name)
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

// isPlainName reports whether a parameter's name is written in JSON and
// in CEL as itself (letters, digits, '-', '.', '_').
func isPlainName(n string) bool {
	return jsonString(n) == strconv.Quote(n)
}

// value is the hole's value in CEL: the annotation's value, typed as the
// core types it (an integer where the template has one and the value is
// one, a string otherwise), or the template's own value.
func (h hole) value() (expr.Expr, error) {
	orig, err := literal(h.orig)
	if err != nil {
		return nil, err
	}
	v := h.p.val
	if h.isString() && h.prefix == "" && h.p.effective != nil {
		return h.p.effective, nil
	}
	if h.isString() {
		// string(): an annotation's value is typed dyn.
		return expr.Cond(h.p.set, expr.Concat(expr.Str(h.prefix), expr.Call("string", v)), orig), nil
	}
	set := expr.Call("dyn", v)
	switch {
	case h.prefix != "":
		set = expr.Call("dyn", expr.Concat(expr.Str(h.prefix), v))
	case isInt(h.orig):
		set = expr.Cond(expr.Method(v, "matches", expr.Str(intPattern)), expr.Call("dyn", expr.Call("int", v)), expr.Call("dyn", v))
	}
	return expr.Cond(h.p.set, set, expr.Call("dyn", orig)), nil
}

// isString reports whether the hole holds a string whatever the Pod sets:
// it is a string in the template (the value replaces it as a string).
func (h hole) isString() bool {
	_, ok := h.orig.(string)
	return ok
}

// compared is the hole's value where a Pod's item is compared with the
// template's: as value gives it, but without the has() that spares Pods
// without annotations a variable read where the value is added (a
// comparison runs only for a Pod that has an item of the name).
func (h hole) compared() (expr.Expr, error) {
	if h.p.computed == nil && h.prefix == "" {
		if _, ok := h.orig.(string); ok {
			// string(): an annotation's value is typed dyn.
			return expr.Call("string", expr.Method(h.p.override, "orValue", expr.Str(h.orig.(string)))), nil
		}
	}
	return h.value()
}

func isListOrMap(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

func isInt(v any) bool {
	switch v.(type) {
	case int, int64, uint64:
		return true
	}
	return false
}
