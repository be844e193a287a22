package yamltext

import (
	"fmt"
	"slices"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kind is what an edit does.
type Kind int

const (
	// InsertEdit adds a key/value pair to a mapping, or an item to a sequence,
	// before the child `before` (nil: at the end).
	InsertEdit Kind = iota
	// DeleteEdit removes a child: a key node (with its value) from a mapping,
	// or an item from a sequence.
	DeleteEdit
	// SetEdit changes the value of a scalar.
	SetEdit
	// FillEdit replaces the empty (null) value target of a mapping field with
	// value, a collection: "volumes:" with nothing after it gets items.
	FillEdit
	// NullifyEdit turns the emptied collection target (the value of a field
	// of parent) back into the null it was before a FillEdit, written as
	// text ("null", "~", or nothing).
	NullifyEdit
)

// Edit is one change to a parsed document, made against the tree Decode
// returned. Splice applies edits to the text at the positions the parser
// recorded in their nodes; Apply applies them to the nodes. Build edits
// with Insert, Delete, Fill, Nullify and Set.
type Edit struct {
	Kind   Kind
	Parent *yaml.Node // mapping or sequence the edit is in
	Before *yaml.Node // insert: anchor child (mapping key or item), nil for end
	Key    string     // insert into a mapping: the new key
	Value  *yaml.Node // insert, fill: the new value or item
	Target *yaml.Node // delete: key node or item; set: the scalar; fill, nullify: the value
	// Text is, for set, the new scalar value; for nullify, the null token;
	// for delete from a flow collection, what goes back between its
	// brackets when the deletes leave it empty (see EmptyInner).
	Text string
	// Origin and OriginN name the items an insert copies (OriginN items
	// from Origin on), so that the text they render to can be reused
	// across documents through a RenderCache. Nil: not cached. The Value
	// of an edit that names its Origin may share the origin's nodes (a
	// template's, the same for every document): Splice only renders it,
	// and Apply puts a Copy of it in the tree, so a document that is
	// spliced costs no copy.
	Origin  *yaml.Node
	OriginN int
}

// Insert adds key: value to the mapping parent, or the item value to the
// sequence parent (key ""), before the child before (nil: at the end).
func Insert(parent, before *yaml.Node, key string, value *yaml.Node) Edit {
	return Edit{Kind: InsertEdit, Parent: parent, Before: before, Key: key, Value: value}
}

// Delete removes target from parent: a key (with its value) from a
// mapping, or an item from a sequence.
func Delete(parent, target *yaml.Node) Edit {
	return Edit{Kind: DeleteEdit, Parent: parent, Target: target}
}

// Fill replaces target, the empty (null) value of a field of the mapping
// parent, with the collection value.
func Fill(parent, target, value *yaml.Node) Edit {
	return Edit{Kind: FillEdit, Parent: parent, Target: target, Value: value}
}

// Nullify turns target, a collection that the edits empty and that is the
// value of a field of parent, back into the null token it was ("null",
// "~", or "" for nothing).
func Nullify(parent, target *yaml.Node, token string) Edit {
	return Edit{Kind: NullifyEdit, Parent: parent, Target: target, Text: token}
}

// Set changes the value of the scalar target to the string text.
func Set(target *yaml.Node, text string) Edit {
	return Edit{Kind: SetEdit, Target: target, Text: text}
}

// Apply applies edits to the tree in order. Anchors are found by
// identity, so earlier edits do not shift later ones.
func Apply(edits []Edit) error {
	for _, e := range edits {
		switch e.Kind {
		case InsertEdit:
			value := e.owned()
			children := []*yaml.Node{value}
			if e.Parent.Kind == yaml.MappingNode {
				children = []*yaml.Node{nodes.NewString(e.Key), value}
			}
			at := len(e.Parent.Content)
			if e.Before != nil {
				at = childIndex(e.Parent, e.Before)
				if at < 0 {
					return fmt.Errorf("internal: insert anchor not found in parent")
				}
			}
			content := make([]*yaml.Node, 0, len(e.Parent.Content)+len(children))
			content = append(content, e.Parent.Content[:at]...)
			content = append(content, children...)
			e.Parent.Content = append(content, e.Parent.Content[at:]...)
			if len(e.Parent.Content) == len(children) && e.Parent.Style&yaml.FlowStyle != 0 {
				// An empty flow collection ({} or []) that now has content
				// reads better in block style.
				e.Parent.Style &^= yaml.FlowStyle
			}
		case DeleteEdit:
			at := childIndex(e.Parent, e.Target)
			if at < 0 {
				return fmt.Errorf("internal: deleted child not found in parent")
			}
			n := 1
			if e.Parent.Kind == yaml.MappingNode {
				n = 2
			}
			e.Parent.Content = append(e.Parent.Content[:at:at], e.Parent.Content[at+n:]...)
		case SetEdit:
			e.Target.Value = e.Text
			e.Target.Tag = "!!str"
		case FillEdit:
			for pair := range slices.Chunk(e.Parent.Content, 2) {
				if pair[1] == e.Target {
					pair[1] = e.owned()
				}
			}
		case NullifyEdit:
			*e.Target = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: e.Text}
		}
	}
	return nil
}

// childIndex returns the index in parent.Content of child (a key for mappings).
func childIndex(parent, child *yaml.Node) int {
	step := childStep(parent)
	for i := 0; i < len(parent.Content); i += step {
		if parent.Content[i] == child {
			return i
		}
	}
	return -1
}

// childStep is how many nodes of parent's content make one child: a
// mapping's pair, or a sequence's item.
func childStep(parent *yaml.Node) int {
	if parent.Kind == yaml.MappingNode {
		return 2
	}
	return 1
}

// owned returns the value to put in the tree: a copy when it may be
// shared with the edit's Origin.
func (e Edit) owned() *yaml.Node {
	if e.Origin != nil {
		return Copy(e.Value)
	}
	return e.Value
}
