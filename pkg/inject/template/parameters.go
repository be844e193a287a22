package template

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

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
	items, err := nodes.ListItems(value, field)
	if err != nil {
		return nil, err
	}
	var out []Parameter
	seen := map[string]bool{}
	for i, item := range items {
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
