package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
)

// Names the policy's expressions start from.
var (
	object      = expr.Object
	spec        = expr.Field(object, "spec")
	metadata    = expr.Field(object, "metadata")
	annotations = expr.Field(metadata, "annotations")
)

// annotation is the value of the Pod's annotation key, "" when it has
// none.
func annotation(key string) expr.Expr {
	return expr.Method(expr.OptIndex(expr.OptField(metadata, "annotations"), expr.Str(key)), "orValue", expr.Str(""))
}

// literal is v (decoded YAML or JSON: maps, lists, strings, numbers,
// booleans, null, and holes for parameters) as a CEL literal. Map keys are
// sorted so the policy text is stable.
func literal(v any) (expr.Expr, error) {
	e, _, err := typedLiteral(v)
	return e, err
}

// typedLiteral is literal, with the CEL type of the literal: "string",
// "list(int)", "map(string, dyn)"; dyn for a hole whose type is known only
// when the Pod is admitted (a hole in a string field holds a string).
func typedLiteral(v any) (expr.Expr, string, error) {
	switch x := v.(type) {
	case nil:
		return expr.Null, "null", nil
	case hole:
		e, err := x.value()
		if x.isString() {
			return e, "string", err
		}
		return e, "dyn", err
	case string:
		return expr.Str(x), "string", nil
	case bool:
		return expr.Bool(x), "bool", nil
	case int:
		return expr.Int(int64(x)), "int", nil
	case int64:
		return expr.Int(x), "int", nil
	case uint64:
		return expr.Raw(strconv.FormatUint(x, 10) + "u"), "uint", nil
	case float64:
		if x == float64(int64(x)) {
			return expr.Int(int64(x)), "int", nil
		}
		return expr.Raw(strconv.FormatFloat(x, 'g', -1, 64)), "double", nil
	case []any:
		items, elem, err := typedLiterals(x)
		return expr.List(items...), "list(" + elem + ")", err
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		values := make([]any, len(keys))
		for i, k := range keys {
			values[i] = x[k]
		}
		fields, elem, err := typedLiterals(values)
		return expr.Map(keys, fields), "map(string, " + elem + ")", err
	default:
		return nil, "", fmt.Errorf("a value of type %T cannot be written in a policy", v)
	}
}

// typedLiterals are the literals of the items of a list or the values of
// a map, and their one CEL type. When they mix types (or there are none)
// the type is dyn, and each literal is wrapped in dyn(): the API server's
// CEL rejects lists and maps whose literals mix types ({"name": "envoy",
// "ports": [...]}), and a dyn() on some of them is not enough
// (TestMixedLiteralsNeedDyn). A literal of type dyn already (a hole's) is
// left as it is.
func typedLiterals(values []any) ([]expr.Expr, string, error) {
	out := make([]expr.Expr, len(values))
	types := make([]string, len(values))
	elem := ""
	for i, v := range values {
		e, t, err := typedLiteral(v)
		if err != nil {
			return nil, "", err
		}
		out[i], types[i] = e, t
		if i == 0 {
			elem = t
		} else if t != elem {
			elem = "dyn"
		}
	}
	if elem != "dyn" && len(values) > 0 {
		return out, elem, nil
	}
	for i, t := range types {
		if t != "dyn" {
			out[i] = expr.Call("dyn", out[i])
		}
	}
	return out, "dyn", nil
}

// jsonString is s encoded as the status record encodes strings
// (encoding/json without HTML escaping), quotes included.
func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

// jsonEscaped is the string expression e JSON-escaped exactly as
// jsonString escapes it (without the quotes). CEL has no JSON encoder: the
// string is split into its characters, each one encoding/json escapes
// replaced by its escape from a table the policy declares once
// (jsonEscapes), and joined again.
func (c *compiler) jsonEscaped(e expr.Expr) expr.Expr {
	if c.jsonEscapes == nil {
		var keys []string
		var values []expr.Expr
		for _, r := range escapedRunes() {
			enc := jsonString(string(r))
			keys, values = append(keys, string(r)), append(values, expr.Str(enc[1:len(enc)-1]))
		}
		c.jsonEscapes = c.variable(expr.Var(c.names.unique("jsonEscapes")),
			"the characters a JSON string escapes, and their escapes (as encoding/json writes them)", expr.Map(keys, values))
	}
	ch := expr.Ident("c")
	escaped := expr.Method(expr.Method(e, "split", expr.Str("")), "map", ch, expr.Method(expr.OptIndex(c.jsonEscapes, ch), "orValue", ch))
	return expr.Method(escaped, "join", expr.Str(""))
}

// escapedRunes lists the characters encoding/json escapes in strings.
func escapedRunes() []rune {
	out := []rune{'\\'}
	candidates := []rune{'"', '\u2028', '\u2029'}
	for r := rune(0); r < 0x20; r++ {
		candidates = append(candidates, r)
	}
	for _, r := range candidates {
		if enc := jsonString(string(r)); enc != `"`+string(r)+`"` {
			out = append(out, r)
		}
	}
	return out
}

// goQuoted is the string expression e quoted as %q quotes printable text,
// so that a value in a message reads as the core's.
func goQuoted(e expr.Expr) expr.Expr {
	for _, r := range []string{`\`, `"`, "\n", "\t"} {
		q := strconv.Quote(r)
		e = expr.Method(e, "replace", expr.Str(r), expr.Str(q[1:len(q)-1]))
	}
	return expr.Quoted(e)
}

// jsonPointerKey escapes a map key for a JSON Pointer path (RFC 6901).
func jsonPointerKey(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// camel is a CEL identifier made of the words of s ("envoy-conf" is
// envoyConf, "example.com/cpu" exampleComCpu), for variable names.
func camel(s string) string {
	var b strings.Builder
	upper := false
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) || r > unicode.MaxASCII {
			upper = b.Len() > 0
			continue
		}
		if b.Len() == 0 && unicode.IsDigit(r) {
			b.WriteString("x")
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}
