package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
)

// longLiteral is the length from which a string of the template (the
// Envoy bootstrap, say) is a literal the policy may bind once.
const longLiteral = 200

// namedLiteral is a literal the policy writes once, in a variable of its
// own, when it would write it in more than one place.
type namedLiteral struct {
	text, name, comment string
}

// nameLiteral offers text to bindRepeated under name.
func (c *compiler) nameLiteral(text, name, comment string) {
	for _, l := range c.literals {
		if l.text == text {
			return
		}
	}
	c.literals = append(c.literals, namedLiteral{text: text, name: c.names.unique(name), comment: comment})
}

// nameLongStrings offers the long strings of an item (a bootstrap passed
// as a flag's value) to bindRepeated, each named for the item and the
// flag or field that holds it: envoyConfigYaml.
func (c *compiler) nameLongStrings(it item) {
	var walk func(v any, context string)
	walk = func(v any, context string) {
		switch x := v.(type) {
		case string:
			if len(x) >= longLiteral {
				c.nameLiteral(x, it.varName()+upperFirst(camel(context)),
					fmt.Sprintf("the template's %s %q: its %s, written once", it.kind().Name, it.name, context))
			}
		case []any:
			for i, e := range x {
				ctx := context
				if i > 0 {
					if flag, ok := x[i-1].(string); ok && strings.HasPrefix(flag, "-") {
						ctx = flag
					}
				}
				walk(e, ctx)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], k)
			}
		}
	}
	walk(it.value, it.name)
}

// bindRepeated declares a variable for each named literal that the
// policy's variables and patch write more than once, first (it reads
// nothing), and writes the variable in its places. It returns the patch.
func (c *compiler) bindRepeated(patch expr.Expr) expr.Expr {
	var bound []variable
	for _, l := range c.literals {
		v := expr.Var(l.name)
		values := make([]expr.Expr, len(c.vars))
		n := 0
		for i, cv := range c.vars {
			var k int
			values[i], k = expr.ReplaceString(cv.value, l.text, v)
			n += k
		}
		replaced, k := expr.ReplaceString(patch, l.text, v)
		if n+k < 2 {
			continue
		}
		for i := range c.vars {
			c.vars[i].value = values[i]
		}
		patch = replaced
		bound = append(bound, variable{name: l.name, comment: l.comment, value: expr.Str(l.text)})
	}
	c.vars = append(bound, c.vars...)
	return patch
}

// upperFirst is s with its first letter upper-case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
