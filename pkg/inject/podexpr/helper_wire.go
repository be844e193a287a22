package podexpr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/jsonstr"
)

// The helper's protocol: one JSON line each way, and the Pod as JSON whose
// numbers keep their type.

// maxHelperValues bounds the values of one Pod sent to the helper: a pod
// template whose aliases expand beyond it (an alias bomb) is refused, not
// expanded.
const maxHelperValues = 1 << 22

// maxHelperDepth bounds the nesting of a Pod sent to the helper: an alias
// to one of its own ancestors nests without end.
const maxHelperDepth = 1000

// helperRequest is one message to the helper: compile Text, or evaluate
// each of Texts over Object.
type helperRequest struct {
	Op      string          `json:"op"` // "compile" or "eval"
	Text    string          `json:"text,omitempty"`
	Checked string          `json:"checked,omitempty"`
	Texts   []string        `json:"texts,omitempty"`
	Object  json.RawMessage `json:"object,omitempty"`
}

// helperResponse is the helper's answer: cel-go's error, or the result by
// its type (null, int, string, or the name of another CEL type); to an
// eval, one of these for each text, in Results.
type helperResponse struct {
	Error   string           `json:"error,omitempty"`
	Type    string           `json:"type,omitempty"`
	Int     int64            `json:"int,omitempty"`
	String  string           `json:"string,omitempty"`
	Results []helperResponse `json:"results,omitempty"`
}

// otherValue is a helper's result of a type no parameter takes.
type otherValue string

// value is one expression's result: cel-go's error, or its value.
func (r helperResponse) value() (any, error) {
	if r.Error != "" {
		return nil, errExpression{r.Error}
	}
	switch r.Type {
	case "null":
		return nil, nil
	case "int":
		return r.Int, nil
	case "string":
		return r.String, nil
	}
	return otherValue(r.Type), nil
}

// helperValue writes a plain value (podObject's) as JSON whose numbers
// keep their type: a float always has a point or an exponent (1.0, not 1),
// an infinity is ±1e999, and an int or a uint has neither, so that
// readHelperValue gives back the very values cel-go would have read here.
// NaN has no JSON form and is refused; so is a pod template whose aliases
// nest without end or expand beyond maxHelperValues.
func helperValue(v any) ([]byte, error) {
	var b []byte
	budget := maxHelperValues
	b, err := appendHelperValue(b, v, 0, &budget)
	if err != nil {
		return nil, fmt.Errorf("the pod template cannot be handed to %s: %w", HelperName, err)
	}
	return b, nil
}

func appendHelperValue(b []byte, v any, depth int, budget *int) ([]byte, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("it holds more than %d values once its aliases are expanded", maxHelperValues)
	}
	if depth > maxHelperDepth {
		return nil, fmt.Errorf("it nests deeper than %d (an alias to one of its own parents?)", maxHelperDepth)
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case float64:
		switch {
		case math.IsNaN(v):
			return nil, errors.New("it holds .nan, which JSON (and so a Pod) cannot hold")
		case math.IsInf(v, 1):
			return append(b, "1e999"...), nil
		case math.IsInf(v, -1):
			return append(b, "-1e999"...), nil
		}
		s := strconv.FormatFloat(v, 'g', -1, 64)
		b = append(b, s...)
		if !strings.ContainsAny(s, ".e") {
			b = append(b, ".0"...)
		}
		return b, nil
	case string:
		return jsonstr.Append(b, v), nil
	case []any:
		b = append(b, '[')
		for i, item := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendHelperValue(b, item, depth+1, budget); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonstr.Append(b, k), ':')
			var err error
			if b, err = appendHelperValue(b, v[k], depth+1, budget); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("a value of type %T", v)
}

// readHelperValue reads what helperValue wrote.
func readHelperValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return typedNumbers(v)
}

func typedNumbers(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, err
			}
			return f, nil
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return strconv.ParseUint(s, 10, 64)
	case []any:
		for i, item := range v {
			t, err := typedNumbers(item)
			if err != nil {
				return nil, err
			}
			v[i] = t
		}
	case map[string]any:
		for k, item := range v {
			t, err := typedNumbers(item)
			if err != nil {
				return nil, err
			}
			v[k] = t
		}
	}
	return v, nil
}

// errExpression marks cel-go's own error, passed on as it is.
type errExpression struct{ msg string }

func (e errExpression) Error() string { return e.msg }

// HelperName is the helper program. It lies beside the program that runs
// it (krew, the Helm plugin's archive and the function's image put it
// there), or on PATH; HelperEnv names another path.
const HelperName = "kinject-cel"
