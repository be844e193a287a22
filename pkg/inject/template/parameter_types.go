package template

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
)

// The types of a template's parameters: how a value of each is checked,
// matched by the admission policy, and written into the template.

// ParameterType is the kind of value an override annotation holds.
type ParameterType string

// Parameter types.
const (
	// TypeQuantity is a Kubernetes resource quantity ("250m", "0.5", "1Gi").
	TypeQuantity ParameterType = "quantity"
	// TypeImage is an image reference ("envoyproxy/envoy:v1.40.0").
	TypeImage ParameterType = "image"
	// TypeInt is a decimal integer ("4", "-1").
	TypeInt ParameterType = "int"
	// TypeString is any string.
	TypeString ParameterType = "string"
	// TypePort is a TCP port number from 1 to 65535 ("8080") that none of
	// the template's sidecars uses (declared or reserved): the port of
	// the app the sidecar proxies to.
	TypePort ParameterType = "port"
)

// Integer reports whether values of the type are written as integers.
func (pt ParameterType) Integer() bool { return pt == TypeInt || pt == TypePort }

// Patterns of the typed values (RE2, so that an admission policy's CEL
// matches() checks exactly what the core checks).
var parameterPatterns = map[ParameterType]string{
	// The Kubernetes quantity grammar, without a sign (resources are never
	// negative) and with exponents of at most two digits: the API server's
	// parser works for minutes on 1E2200000000.
	TypeQuantity: `^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(` + grammar.QuantitySuffixPattern + `|[eE][+-]?[0-9]{1,2})?$`,
	// [registry[:port]/]path[:tag][@digest], as the distribution reference
	// grammar has it.
	TypeImage: `^(([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]+)?|\[[0-9a-fA-F:]+\](:[0-9]+)?)/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(@[a-zA-Z][a-zA-Z0-9]*([-_+.][a-zA-Z][a-zA-Z0-9]*)*:[0-9a-fA-F]{32,})?$`,
	// Canonical decimal integers only, so the value is written the same in
	// YAML and JSON.
	TypeInt:    `^-?(0|[1-9][0-9]{0,17})$`,
	TypeString: `^(.|\n)*$`,
	TypePort:   `^([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$`,
}

var parameterExamples = map[ParameterType]string{
	TypeQuantity: "a resource quantity such as 250m, 0.5 or 1Gi",
	TypeImage:    "an image reference such as envoyproxy/envoy:v1.40.0",
	TypeInt:      "an integer such as 2",
	TypeString:   "a string",
	TypePort:     "a port number from 1 to 65535 such as 8080",
}

// Pattern returns the regular expression (RE2) a value of the type matches.
func (pt ParameterType) Pattern() string { return parameterPatterns[pt] }

// Example describes a valid value of the type, as messages name it.
func (pt ParameterType) Example() string { return parameterExamples[pt] }

// Check reports whether value is a valid value of the type: exactly what
// Pattern matches.
func (pt ParameterType) Check(value string) error {
	var ok bool
	switch pt {
	case TypeQuantity:
		ok = grammar.IsQuantity(value)
	case TypeImage:
		ok = grammar.IsImage(value)
	case TypeInt:
		ok = ascii.IsDecimalInt(value)
	case TypeString:
		ok = true
	case TypePort:
		ok = grammar.IsPort(value)
	default:
		return fmt.Errorf("unknown type %q", string(pt))
	}
	if !ok {
		return fmt.Errorf("%q is not %s", value, parameterExamples[pt])
	}
	return nil
}
