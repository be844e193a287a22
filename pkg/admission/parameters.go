package admission

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// param is one override parameter of the template, as the policy reads it:
// the Pod's annotation key, checked with the core's own pattern.
type param struct {
	template.Parameter
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
var intPattern = template.TypeInt.Pattern()

// loadParams binds every parameter to its place in the template's items.
// The core has already checked each parameter against the template and
// written its default there, so every field is found: one that is not is
// an error of the template, not of the Pod.
func (c *compiler) loadParams(params []template.Parameter) error {
	c.params = make([]param, len(params))
	for i, p := range params {
		name := c.names.unique(camel(p.Annotation))
		key := naming.ProfileAnnotation(c.profile, p.Annotation)
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
func placeHole(node any, steps []template.FieldStep, p *param) error {
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
		p.effective = expr.Cond(p.set, p.val, expr.Str(s)) // val holds a string
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

// flagWord finds the word of the template's list that holds the flag's
// value, as the core finds it (template.FlagWord).
func flagWord(list []any, flag string) (int, string) {
	words := make([]string, len(list))
	for i, e := range list {
		if h, ok := e.(hole); ok {
			e = h.orig
		}
		words[i] = fmt.Sprint(e)
	}
	return template.FlagWord(words, flag)
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
			// val holds a string: the annotation's, or string() of the
			// expression's.
			c.variable(p.effective, "the value of "+p.Field+": the annotation's, or the template's",
				expr.Cond(p.set, p.val, expr.Str(p.orig.(string))))
		}
	}
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
