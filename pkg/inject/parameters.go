package inject

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

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

// Parameter is one field of the template that a workload may override with
// an annotation.
type Parameter struct {
	// Annotation is the override annotation: a bare name
	// ("cpu-request"), put under the profile's domain
	// (sidecar.kinject.dev/cpu-request), or a full key.
	Annotation string
	// Field is where the value goes in the template, for example
	// "containers[envoy].resources.requests.cpu",
	// "containers[envoy].args[--concurrency]" (the word after the flag) or
	// "volumes[envoy-conf].configMap.name".
	Field string
	// Default is the value used without the annotation: the template's own
	// value at Field.
	Default string
	Type    ParameterType
	// Expression, when set, is CEL over the pod template seen as a Pod
	// (object.metadata, object.spec) whose value is used without the
	// annotation, in place of Default: an int for an int parameter, a
	// string otherwise. null means the Pod gives no value: Default is
	// used.
	Expression string
	expr       *podexpr.Expression
	path       fieldPath
}

// Target returns the template item the parameter sets: its list
// ("containers", "initContainers" or "volumes" as declared) and name.
func (p Parameter) Target() (list, name string) { return p.path.list, p.path.item }

// Path returns the steps below the template item, for front ends that
// compile the same setting into another form. A step with Key set selects
// a list item by name, or, in a list of strings such as args, the word
// after the flag Key.
func (p Parameter) Path() []FieldStep { return append([]FieldStep(nil), p.path.steps...) }

// parseParameters reads a template's parameters list.
func parseParameters(value *yaml.Node, field string) ([]Parameter, error) {
	if nodes.IsNull(value) {
		return nil, nil
	}
	if value.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list", field)
	}
	var out []Parameter
	seen := map[string]bool{}
	for i, item := range value.Content {
		at := fmt.Sprintf("%s[%d]", field, i)
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a mapping with annotation, field, type and default", at)
		}
		p := Parameter{Type: TypeString}
		hasDefault := false
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j].Value, item.Content[j+1]
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s.%s: must be a string", at, k)
			}
			switch k {
			case "annotation":
				p.Annotation = v.Value
			case "field":
				p.Field = v.Value
			case "default":
				p.Default, hasDefault = v.Value, true
			case "type":
				p.Type = ParameterType(v.Value)
			case "expression":
				p.Expression = v.Value
			default:
				return nil, fmt.Errorf("%s.%s: unknown field (a parameter has annotation, field, type, default and expression)", at, k)
			}
		}
		if err := checkAnnotationName(p.Annotation); err != nil {
			return nil, fmt.Errorf("%s.annotation: %w", at, err)
		}
		if seen[p.Annotation] {
			return nil, fmt.Errorf("%s.annotation: %q is declared twice", at, p.Annotation)
		}
		seen[p.Annotation] = true
		if parameterPatterns[p.Type] == "" {
			return nil, fmt.Errorf("%s.type: %q is not a type (want quantity, image, int, port or string)", at, string(p.Type))
		}
		path, err := parseFieldPath(p.Field)
		if err != nil {
			return nil, fmt.Errorf("%s.field: %w", at, err)
		}
		p.path = path
		if strings.TrimSpace(p.Expression) != "" {
			// Compiled on first use: start-up stays what it was.
			p.expr = podexpr.New(p.Expression)
		} else if p.Expression != "" {
			return nil, fmt.Errorf("%s.expression: is empty", at)
		}
		if hasDefault {
			if err := p.Type.Check(p.Default); err != nil {
				return nil, fmt.Errorf("%s.default: %w", at, err)
			}
		} else {
			p.Default = "\x00" // taken from the template
		}
		out = append(out, p)
	}
	return out, nil
}

// checkAnnotationName accepts a bare annotation name or a full key whose
// prefix is a DNS subdomain.
func checkAnnotationName(s string) error {
	if s == "" {
		return fmt.Errorf("is required")
	}
	prefix, name, full := strings.Cut(s, "/")
	if !full {
		name, prefix = s, ""
	}
	if !grammar.IsAnnotationName(name) || len(name) > 63 {
		return fmt.Errorf("%q is not a valid annotation name", s)
	}
	if full && (!grammar.IsDNSSubdomain(prefix)) {
		return fmt.Errorf("%q: the prefix is not a DNS subdomain", s)
	}
	if !full && (naming.IsOwnName(name)) {
		return fmt.Errorf("%q is the profile's own %s annotation", s, name)
	}
	return nil
}

// bindParameters checks every parameter against the template's items and
// settles its default: a declared default is written into the template
// (where the template has no value) or must equal the template's value; an
// undeclared one is the template's value.
func (t *Template) bindParameters(where string) error {
	for i := range t.Parameters {
		p := &t.Parameters[i]
		at := fmt.Sprintf("%s[%d]", nodes.JoinField(where, "parameters"), i)
		item := t.parameterItem(p.path)
		if item == nil {
			return fmt.Errorf("%s.field: %q: the template has no %s named %q", at, p.Field, strings.TrimSuffix(p.path.list, "s"), p.path.item)
		}
		current, ok := getPath(item, p.path.steps)
		switch {
		case !ok && p.Default == "\x00":
			return fmt.Errorf("%s: %q is not set in the template: give a default", at, p.Field)
		case !ok:
			if err := setPath(item, p.path.steps, p.Default, p.Type); err != nil {
				return fmt.Errorf("%s.field: %q: %w", at, p.Field, err)
			}
		case p.Default == "\x00":
			if err := p.Type.Check(current); err != nil {
				return fmt.Errorf("%s: the template's value at %q: %w", at, p.Field, err)
			}
			p.Default = current
		case current != p.Default:
			return fmt.Errorf("%s.default: %q differs from the template's value %q at %q (set one of them)", at, p.Default, current, p.Field)
		}
	}
	return nil
}

// resolveDefaults takes the defaults from the template again after
// settings changed it (an --image override).
func (t *Template) resolveDefaults() {
	t.Parameters = append([]Parameter(nil), t.Parameters...)
	for i := range t.Parameters {
		p := &t.Parameters[i]
		if item := t.parameterItem(p.path); item != nil {
			if v, ok := getPath(item, p.path.steps); ok {
				p.Default = v
			}
		}
	}
}

// parameterItem finds the item a parameter sets. A sidecar is found by name
// in containers or initContainers, so a parameter keeps working when the
// template is turned native or classic.
func (t *Template) parameterItem(p fieldPath) *yaml.Node {
	if p.list == "volumes" {
		return nodes.ItemByName(nodes.NewSequence(t.Volumes...), p.item)
	}
	if c := nodes.ItemByName(nodes.NewSequence(t.Containers...), p.item); c != nil {
		return c
	}
	return nodes.ItemByName(nodes.NewSequence(t.InitContainers...), p.item)
}

// parameterValues reads the parameters' annotations from the object and
// its pod template (the pod template's win) and checks them, and computes
// the expressions of the parameters whose annotation is not set, over the
// pod template without what own (the profile's record, nil when none)
// says was injected. It returns the annotations that are set and the
// values of expressions that are not null, by parameter name.
func parameterValues(t *podTarget, profile string, tpl *Template, own *profileRecord) (map[string]string, error) {
	params := tpl.Parameters
	if len(params) == 0 {
		return nil, nil
	}
	objMeta := nodes.MapValue(t.obj, "metadata")
	var values map[string]string
	var pod *podexpr.Pod
	for _, p := range params {
		key := naming.ProfileAnnotation(profile, p.Annotation)
		where, v := nodes.JoinField(t.field, "metadata.annotations"), nodes.MapValue(nodes.MapValue(t.meta, "annotations"), key)
		if v == nil && t.obj != t.template {
			where, v = "metadata.annotations", nodes.MapValue(nodes.MapValue(objMeta, "annotations"), key)
		}
		if v == nil && p.expr != nil {
			if pod == nil {
				pod = expressionPod(t, own)
			}
			value, err := expressionResult(p.expr, pod, p.Type)
			if errors.Is(err, errNoValue) {
				continue // the default, as without an expression
			}
			if err != nil {
				// The template holds the expression: naming its parameter
				// and field finds it, and keeps the message short.
				return nil, fmt.Errorf("parameters: %s: %s: expression: %w", p.Annotation, p.Field, err)
			}
			if values == nil {
				values = map[string]string{}
			}
			values[p.Annotation] = value
			continue
		}
		if v == nil {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s[%q]: must be a string", where, key)
		}
		if err := p.Type.Check(v.Value); err != nil {
			return nil, errors.New(message(MessageBadOverride, where, strconv.Quote(key), strconv.Quote(v.Value), p.Type.Example(), p.Field))
		}
		if err := tpl.checkOverridePort(p, where, key, v.Value); err != nil {
			return nil, err
		}
		if values == nil {
			values = map[string]string{}
		}
		values[p.Annotation] = v.Value
	}
	return values, nil
}

// withValues returns the template with the override values set. Only the
// items a value changes are copied.
func (t *Template) withValues(values map[string]string) *Template {
	if len(values) == 0 {
		return t
	}
	out := *t
	out.Containers = append([]*yaml.Node(nil), t.Containers...)
	out.InitContainers = append([]*yaml.Node(nil), t.InitContainers...)
	out.Volumes = append([]*yaml.Node(nil), t.Volumes...)
	copied := map[*yaml.Node]bool{}
	for _, p := range t.Parameters {
		v, ok := values[p.Annotation]
		if !ok {
			continue
		}
		lists := [][]*yaml.Node{out.Containers, out.InitContainers}
		if p.path.list == "volumes" {
			lists = [][]*yaml.Node{out.Volumes}
		}
		for _, list := range lists { // share their arrays with out
			for i, item := range list {
				if nodes.ScalarField(item, "name") != p.path.item {
					continue
				}
				if !copied[item] {
					list[i] = yamltext.Copy(item)
					copied[list[i]] = true
				}
				// Checked when the template was loaded.
				_ = setPath(list[i], p.path.steps, v, p.Type)
			}
		}
	}
	return &out
}

// sameValues reports whether two override sets are equal.
func sameValues(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ParameterNames lists the template's override annotations, sorted.
// NeedsCEL reports whether one of the template's expressions may need
// cel-go on every document: it is outside the subset the core evaluates,
// or not known to compile without cel-go (podexpr.Expression.Fast). A
// program that runs cel-go in another process (kubectl-inject) hands such
// a template to one that links it.
func (t *Template) NeedsCEL() bool {
	for _, p := range t.Parameters {
		if p.expr != nil && !p.expr.Fast() {
			return true
		}
	}
	return false
}

func (t *Template) ParameterNames() []string {
	out := make([]string, 0, len(t.Parameters))
	for _, p := range t.Parameters {
		out = append(out, p.Annotation)
	}
	sort.Strings(out)
	return out
}
