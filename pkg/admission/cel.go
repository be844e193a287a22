package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// celString is s as a CEL string literal. Go's quoting is valid CEL: both
// accept \a \b \f \n \r \t \v \\ \" \xHH \uHHHH and \UHHHHHHHH.
func celString(s string) string { return strconv.Quote(s) }

// celStrings is a CEL list literal of strings.
func celStrings(list []string) string {
	quoted := make([]string, len(list))
	for i, s := range list {
		quoted[i] = celString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// celValue is v (decoded YAML or JSON: maps, lists, strings, numbers,
// booleans, null) as a CEL literal. Map keys are sorted so the policy text
// is stable.
func celValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case hole:
		return x.celExpr()
	case string:
		return celString(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10) + "u", nil
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10), nil
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case []any:
		items := make([]string, len(x))
		for i, item := range x {
			s, err := celValue(item)
			if err != nil {
				return "", err
			}
			items[i] = s
		}
		return "[" + strings.Join(wrapMixed(x, items), ", ") + "]", nil
	case map[string]any:
		keys := sortedKeys(x)
		values := make([]any, len(keys))
		fields := make([]string, len(keys))
		for i, k := range keys {
			s, err := celValue(x[k])
			if err != nil {
				return "", err
			}
			values[i], fields[i] = x[k], s
		}
		fields = wrapMixed(values, fields)
		for i, k := range keys {
			fields[i] = celString(k) + ": " + fields[i]
		}
		return "{" + strings.Join(fields, ", ") + "}", nil
	default:
		return "", fmt.Errorf("a value of type %T cannot be written in a policy", v)
	}
}

// wrapMixed wraps every literal in dyn() when the values are not all of one
// kind: the API server's CEL rejects lists and maps whose literals mix
// types ({"name": "envoy", "ports": [...]}), and dyn() makes them one type.
func wrapMixed(values []any, literals []string) []string {
	for _, v := range values {
		if fmt.Sprintf("%T", v) != fmt.Sprintf("%T", values[0]) || isAggregate(v) {
			out := make([]string, len(literals))
			for i, l := range literals {
				out[i] = "dyn(" + l + ")"
			}
			return out
		}
	}
	return literals
}

// isAggregate reports whether v is a list or map, whose CEL types differ
// with their contents even when both are lists or maps.
func isAggregate(v any) bool {
	switch v.(type) {
	case []any, map[string]any, hole:
		// A hole's type is known only when the Pod is admitted.
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// celJSONEscape wraps the CEL string expression expr so that it evaluates
// to expr's value JSON-escaped exactly as jsonString escapes it (without the
// quotes). CEL has no JSON encoder, so every character encoding/json
// escapes gets its own replace, backslash first.
func celJSONEscape(expr string) string {
	var b strings.Builder
	b.WriteString(expr)
	for _, r := range escapedRunes() {
		enc := jsonString(string(r))
		b.WriteString(".replace(" + celString(string(r)) + ", " + celString(enc[1:len(enc)-1]) + ")")
	}
	return b.String()
}

// escapedRunes lists the characters encoding/json escapes in strings, the
// backslash first so later replacements are not escaped again.
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

// jsonPointerKey escapes a map key for a JSON Pointer path (RFC 6901).
func jsonPointerKey(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// celIdent reports whether s can be written as a CEL field selection
// (x.s) rather than an index (x["s"]).
func celIdent(s string) bool {
	if s == "" || celReserved[s] {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}
