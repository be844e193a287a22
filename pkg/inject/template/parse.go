package template

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// partialSpecFields are the fields a partial Pod spec may hold.
var partialSpecFields = map[string]bool{
	"containers": true, "initContainers": true, "volumes": true, "metadata": true, "parameters": true,
	"reservedPorts": true, "drain": true,
}

// ParsePartialSpec reads a partial Pod spec mapping (containers,
// initContainers, volumes, metadata) into a Template. where prefixes field
// paths in errors ("data.config", "spec.template").
func ParsePartialSpec(node *yaml.Node, where string) (*Template, error) {
	node = nodes.ResolveDocument(node)
	if node == nil || node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping with containers, initContainers, volumes or metadata", where)
	}
	t := &Template{Source: where}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i].Value, node.Content[i+1]
		field := nodes.JoinField(where, key)
		if !partialSpecFields[key] {
			return nil, fmt.Errorf("%s: unknown field (a template holds containers, initContainers, volumes, metadata, parameters, reservedPorts and drain)", field)
		}
		var err error
		switch key {
		case "containers":
			t.Containers, err = namedItems(value, field)
		case "initContainers":
			t.InitContainers, err = namedItems(value, field)
		case "volumes":
			t.Volumes, err = namedItems(value, field)
		case "metadata":
			t.Labels, t.Annotations, err = parseTemplateMetadata(value, field)
		case "parameters":
			t.Parameters, err = parseParameters(value, field)
		case "reservedPorts":
			t.ReservedPorts, err = parseReservedPorts(value, field)
		case "drain":
			t.Drain, err = parseDrain(value, field)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if err := t.validateReservedPorts(); err != nil {
		return nil, err
	}
	t.ports = t.listSidecarPorts()
	if err := t.validateDrain(); err != nil {
		return nil, err
	}
	if err := t.bindParameters(where); err != nil {
		return nil, err
	}
	return t, nil
}

// namedItems checks that value is a sequence of mappings and returns copies
// of its items.
func namedItems(value *yaml.Node, field string) ([]*yaml.Node, error) {
	list, err := nodes.ListItems(value, field)
	if err != nil {
		return nil, err
	}
	items := make([]*yaml.Node, 0, len(list))
	for i, item := range list {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s[%d]: must be a mapping", field, i)
		}
		items = append(items, yamltext.Copy(item))
	}
	return items, nil
}

func parseTemplateMetadata(value *yaml.Node, field string) (labels, annotations []KeyValue, err error) {
	if value.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: must be a mapping with labels and annotations", field)
	}
	for i := 0; i+1 < len(value.Content); i += 2 {
		key, v := value.Content[i].Value, value.Content[i+1]
		sub := nodes.JoinField(field, key)
		switch key {
		case "labels":
			labels, err = stringMap(v, sub)
		case "annotations":
			annotations, err = stringMap(v, sub)
		default:
			return nil, nil, fmt.Errorf("%s: unknown field (template metadata holds labels and annotations)", sub)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return labels, annotations, nil
}

func stringMap(value *yaml.Node, field string) ([]KeyValue, error) {
	if nodes.IsNull(value) {
		return nil, nil
	}
	if value.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping of strings", field)
	}
	out := make([]KeyValue, 0, len(value.Content)/2)
	for i := 0; i+1 < len(value.Content); i += 2 {
		k, v := value.Content[i], value.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s.%s: must be a string", field, k.Value)
		}
		if k.Value == naming.StatusAnnotation {
			return nil, fmt.Errorf("%s.%s: is managed by kubectl-inject and cannot be set by a template", field, k.Value)
		}
		out = append(out, KeyValue{Key: k.Value, Value: v.Value})
	}
	return out, nil
}
