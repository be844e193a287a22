package inject

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// editKind is what an edit does.
type editKind int

const (
	// insertEdit adds a key/value pair to a mapping, or an item to a sequence,
	// before the child `before` (nil: at the end).
	insertEdit editKind = iota
	// deleteEdit removes a child: a key node (with its value) from a mapping,
	// or an item from a sequence.
	deleteEdit
	// setEdit changes the value of a scalar.
	setEdit
	// fillEdit replaces the empty (null) value target of a mapping field with
	// value, a collection: "volumes:" with nothing after it gets items.
	fillEdit
	// nullifyEdit turns the emptied collection target (the value of a field
	// of parent) back into the null it was before a fillEdit, written as
	// text ("null", "~", or nothing).
	nullifyEdit
)

// edit is one change to a parsed document. The planners compute edits
// against the original tree; they are then applied either to the nodes (the
// KRM function path) or to the original text at the positions the parser
// reported (the path that keeps every other byte as the user wrote it).
type edit struct {
	kind   editKind
	parent *yaml.Node // mapping or sequence the edit is in
	before *yaml.Node // insert: anchor child (mapping key or item), nil for end
	key    string     // insert into a mapping: the new key
	value  *yaml.Node // insert: the new value or item
	target *yaml.Node // delete: key node or item; set: the scalar; fill, nullify: the value
	// text is, for set, the new scalar value; for nullify, the null token;
	// for delete from a flow collection, what goes back between its
	// brackets when the deletes leave it empty (Status.Empty).
	text string
	// origin and originN name the template items an insert copies, so the
	// text they render to can be reused across documents.
	origin  *yaml.Node
	originN int
}

func insertAt(parent, before *yaml.Node, key string, value *yaml.Node) edit {
	return edit{kind: insertEdit, parent: parent, before: before, key: key, value: value}
}

func deleteChild(parent, target *yaml.Node) edit {
	return edit{kind: deleteEdit, parent: parent, target: target}
}

func fill(parent, target, value *yaml.Node) edit {
	return edit{kind: fillEdit, parent: parent, target: target, value: value}
}

func nullify(parent, target *yaml.Node, token string) edit {
	return edit{kind: nullifyEdit, parent: parent, target: target, text: token}
}

func setScalar(target *yaml.Node, text string) edit {
	return edit{kind: setEdit, target: target, text: text}
}

// applyToNodes applies edits to the tree in order. Anchors are found by
// identity, so earlier edits do not shift later ones.
func applyToNodes(edits []edit) error {
	for _, e := range edits {
		switch e.kind {
		case insertEdit:
			children := []*yaml.Node{e.value}
			if e.parent.Kind == yaml.MappingNode {
				children = []*yaml.Node{newString(e.key), e.value}
			}
			at := len(e.parent.Content)
			if e.before != nil {
				at = childIndex(e.parent, e.before)
				if at < 0 {
					return fmt.Errorf("internal: insert anchor not found in parent")
				}
			}
			content := make([]*yaml.Node, 0, len(e.parent.Content)+len(children))
			content = append(content, e.parent.Content[:at]...)
			content = append(content, children...)
			e.parent.Content = append(content, e.parent.Content[at:]...)
			if len(e.parent.Content) == len(children) && e.parent.Style&yaml.FlowStyle != 0 {
				// An empty flow collection ({} or []) that now has content
				// reads better in block style.
				e.parent.Style &^= yaml.FlowStyle
			}
		case deleteEdit:
			at := childIndex(e.parent, e.target)
			if at < 0 {
				return fmt.Errorf("internal: deleted child not found in parent")
			}
			n := 1
			if e.parent.Kind == yaml.MappingNode {
				n = 2
			}
			e.parent.Content = append(e.parent.Content[:at:at], e.parent.Content[at+n:]...)
		case setEdit:
			e.target.Value = e.text
			e.target.Tag = "!!str"
		case fillEdit:
			for i := 1; i < len(e.parent.Content); i += 2 {
				if e.parent.Content[i] == e.target {
					e.parent.Content[i] = e.value
				}
			}
		case nullifyEdit:
			*e.target = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: e.text}
		}
	}
	return nil
}

// childIndex returns the index in parent.Content of child (a key for mappings).
func childIndex(parent, child *yaml.Node) int {
	step := 1
	if parent.Kind == yaml.MappingNode {
		step = 2
	}
	for i := 0; i < len(parent.Content); i += step {
		if parent.Content[i] == child {
			return i
		}
	}
	return -1
}
