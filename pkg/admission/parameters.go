package admission

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// param is one override parameter of the template, as the policy reads it:
// the Pod's annotation key, checked with the core's own pattern.
type param struct {
	inject.Parameter
	key string // the full annotation key for the profile
	// set and val name the variables telling whether the Pod has the
	// annotation, and its value ("" when it has none).
	set, val string
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
	for i, p := range params {
		c.params[i] = param{
			Parameter: p,
			key:       inject.ProfileAnnotation(c.profile, p.Annotation),
			set:       fmt.Sprintf("set_p%d", i),
			val:       fmt.Sprintf("val_p%d", i),
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
			if it.name != name || (list == "volumes") != (it.list == "volumes") {
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
		lit, err := celValue(c.items[j].value)
		if err != nil {
			return fmt.Errorf("template: %s %q: %w", c.items[j].list, c.items[j].name, err)
		}
		c.items[j].cel = lit
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

// addParamVariables declares, for every parameter, whether the Pod has its
// annotation and the value.
func (c *compiler) addParamVariables() {
	for _, p := range c.params {
		k := celString(p.key)
		c.variable(p.set, fmt.Sprintf("has(%s) && %s in %s", annotationsExpr, k, annotationsExpr))
		c.variable(p.val, fmt.Sprintf("variables.%s ? %s[%s] : \"\"", p.set, annotationsExpr, k))
	}
}

// badValueChecks are the first entries of the conflict chain: an override
// value that does not match its type. The core fails the object with this
// message before anything else, and the Pod is left as created.
func (c *compiler) badValueChecks() string {
	var b strings.Builder
	for _, p := range c.params {
		msg := fmt.Sprintf("metadata.annotations[%q]: ", p.key)
		fmt.Fprintf(&b, "variables.%s && !variables.%s.matches(%s) ? %s + '\"' + %s + '\" is not ' + %s :\n",
			p.set, p.val, celString(p.Type.Pattern()), celString(msg), celGoQuoted("variables."+p.val),
			celString(fmt.Sprintf("%s (it sets %s)", typeExample(p.Type), p.Field)))
	}
	return b.String()
}

// celGoQuoted escapes backslashes and quotes of a CEL string expression, as
// %q does for printable text, so that a value in a message reads as the
// core's.
func celGoQuoted(expr string) string {
	return expr + `.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t")`
}

// typeExample is the core's description of a valid value of the type.
func typeExample(t inject.ParameterType) string {
	err := t.Check("\x00")
	if err == nil {
		return "a string"
	}
	// The core's message is `"VALUE" is EXAMPLE`: keep EXAMPLE.
	_, example, _ := strings.Cut(err.Error(), " is not ")
	return example
}

// valuesField renders the record's values: the override annotations that
// are set, by parameter name (sorted, as encoding/json sorts map keys).
func (c *compiler) valuesField() string {
	if len(c.params) == 0 {
		return "''"
	}
	byName := map[string]param{}
	for _, p := range c.params {
		byName[p.Annotation] = p
	}
	parts := make([]string, 0, len(byName))
	for _, n := range sortedKeys(byName) {
		p := byName[n]
		value := "variables." + p.val
		if p.Type == inject.TypeString {
			// The other types' patterns admit no character JSON escapes,
			// and a value that does not match them is never recorded.
			value = celJSONEscape(value)
		}
		parts = append(parts, fmt.Sprintf(`(variables.%s ? [%s + '"' + %s + '"'] : [])`,
			p.set, celString(jsonString(n)+":"), value))
	}
	list := "(" + strings.Join(parts, " + ") + ")"
	return fmt.Sprintf(`(size(%s) > 0 ? ',"values":{' + %s.join(",") + '}' : '')`, list, list)
}

// celExpr is the hole's value in CEL: the annotation's value, typed as the
// core types it (an integer where the template has one and the value is
// one, a string otherwise), or the template's own value.
func (h hole) celExpr() (string, error) {
	orig, err := celValue(h.orig)
	if err != nil {
		return "", err
	}
	v := "variables." + h.p.val
	set := "dyn(" + v + ")"
	switch {
	case h.prefix != "":
		set = "dyn(" + celString(h.prefix) + " + " + v + ")"
	case isInt(h.orig):
		set = fmt.Sprintf("(%s.matches(%s) ? dyn(int(%s)) : dyn(%s))", v, celString(intPattern), v, v)
	}
	return fmt.Sprintf("(variables.%s ? %s : dyn(%s))", h.p.set, set, orig), nil
}

// subsetExpr is true when the Pod's value at expr is the hole's value.
func (h hole) subsetExpr(expr string, path []string) string {
	v := "variables." + h.p.val
	if isQuantityPath(path) && !isListOrMap(h.orig) {
		// One comparison, against whichever quantity applies.
		want := fmt.Sprintf("(variables.%s ? %s : %s)", h.p.set, v, celString(fmt.Sprint(h.orig)))
		return quantityExprOf(expr, want)
	}
	var set string
	switch {
	case h.prefix != "":
		set = fmt.Sprintf("%s == %s + %s", expr, celString(h.prefix), v)
	case isInt(h.orig):
		set = fmt.Sprintf("(%s.matches(%s) ? %s == int(%s) : %s == %s)", v, celString(intPattern), expr, v, expr, v)
	default:
		set = expr + " == " + v
	}
	return fmt.Sprintf("(variables.%s ? (%s) : (%s))", h.p.set, set, subsetExpr(expr, h.orig, path))
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
