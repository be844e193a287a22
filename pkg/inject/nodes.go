package inject

import "sigs.k8s.io/kustomize/kyaml/yaml"

// resolveDocument returns the content of a document node, or n itself.
func resolveDocument(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return n.Content[0]
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// mapLookup returns the key and value nodes of field in mapping m, or nils.
func mapLookup(m *yaml.Node, field string) (key, value *yaml.Node) {
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

// mapValue returns the value of field in mapping m, or nil.
func mapValue(m *yaml.Node, field string) *yaml.Node {
	_, v := mapLookup(m, field)
	return v
}

// scalarField returns the string value of a scalar field of mapping m.
func scalarField(m *yaml.Node, field string) string {
	v := mapValue(m, field)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// setScalarField sets a string field of mapping m, adding it when missing.
func setScalarField(m *yaml.Node, field, value string) {
	if v := mapValue(m, field); v != nil {
		v.Kind, v.Tag, v.Value, v.Content = yaml.ScalarNode, "!!str", value, nil
		return
	}
	m.Content = append(m.Content, newString(field), newString(value))
}

// deleteField removes field from mapping m.
func deleteField(m *yaml.Node, field string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == field {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}

func newString(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func newMapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func newSequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// itemNames returns the "name" of each mapping item of a sequence.
func itemNames(seq *yaml.Node) []string {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	return namesOf(seq.Content)
}

// namesOf returns the "name" of each item.
func namesOf(items []*yaml.Node) []string {
	names := make([]string, 0, len(items))
	for _, item := range items {
		names = append(names, scalarField(item, "name"))
	}
	return names
}

// itemByName returns the item of seq whose name is name, or nil.
func itemByName(seq *yaml.Node, name string) *yaml.Node {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	for _, item := range seq.Content {
		if scalarField(item, "name") == name {
			return item
		}
	}
	return nil
}

// NodeKind names the kind of a node: "list", "scalar", "alias" or
// "mapping".
func NodeKind(n *yaml.Node) string {
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
	if isNull(n) {
		return "null"
	}
	return "a " + NodeKind(n)
}
