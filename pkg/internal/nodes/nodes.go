package nodes

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResolveDocument returns the content of a document node, or n itself.
func ResolveDocument(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return n.Content[0]
	}
	return n
}

// IsNull reports whether n is missing or a null scalar.
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// MapLookup returns the key and value nodes of field in mapping m, or nils.
func MapLookup(m *yaml.Node, field string) (key, value *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == field {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// MapValue returns the value of field in mapping m, or nil.
func MapValue(m *yaml.Node, field string) *yaml.Node {
	_, v := MapLookup(m, field)
	return v
}

// ScalarField returns the string value of a scalar field of mapping m.
func ScalarField(m *yaml.Node, field string) string {
	v := MapValue(m, field)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// SetScalarField sets a string field of mapping m, adding it when missing.
func SetScalarField(m *yaml.Node, field, value string) {
	if v := MapValue(m, field); v != nil {
		v.Kind, v.Tag, v.Value, v.Content = yaml.ScalarNode, "!!str", value, nil
		return
	}
	m.Content = append(m.Content, NewString(field), NewString(value))
}

// DeleteField removes field from mapping m.
func DeleteField(m *yaml.Node, field string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == field {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}

// NewString returns a new string scalar.
func NewString(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// NewMapping returns a new, empty mapping.
func NewMapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

// NewSequence returns a new sequence of items.
func NewSequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// SeqItems returns the items of a sequence, or nil for anything else.
func SeqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// ScalarItems returns the values of a sequence's items (a container's
// command or args).
func ScalarItems(seq *yaml.Node) []string {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]string, 0, len(seq.Content))
	for _, n := range seq.Content {
		out = append(out, n.Value)
	}
	return out
}

// ItemNames returns the "name" of each mapping item of a sequence.
func ItemNames(seq *yaml.Node) []string {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	return NamesOf(seq.Content)
}

// NamesOf returns the "name" of each item.
func NamesOf(items []*yaml.Node) []string {
	names := make([]string, 0, len(items))
	for _, item := range items {
		names = append(names, ScalarField(item, "name"))
	}
	return names
}

// ItemByName returns the item of seq whose name is name, or nil.
func ItemByName(seq *yaml.Node, name string) *yaml.Node {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	for _, item := range seq.Content {
		if ScalarField(item, "name") == name {
			return item
		}
	}
	return nil
}

// JoinField appends key to the field path where ("spec" and "template"
// give "spec.template"); an empty where gives key.
func JoinField(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// Kind names the kind of a node: "list", "scalar", "alias" or "mapping".
func Kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "mapping"
}

// DescribeNonObject says what a node that is not an object is ("null",
// "a list"): a List item, a ResourceList item, a metadata field.
func DescribeNonObject(n *yaml.Node) string {
	if IsNull(n) {
		return "null"
	}
	return "a " + Kind(n)
}

// PlainValue decodes a node to plain Go values for comparison and hashing;
// a node that does not decode gives its text.
func PlainValue(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}

// ListItems returns the items of a list that the field named field holds:
// none when it is null or absent, an error naming the field when it is not
// a list.
func ListItems(value *yaml.Node, field string) ([]*yaml.Node, error) {
	if IsNull(value) {
		return nil, nil
	}
	if value.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list", field)
	}
	return value.Content, nil
}
