package yamltext

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Decode parses the text of one document and returns its DocumentNode,
// or nil for a document with no content. Text that holds more
// than one (two JSON values one after the other, or a second YAML document
// after "...") is an error: editing only the first would pass the others
// over in silence. JSON's "\/" escape, which the YAML parser lacks, is read
// as "/" (see solidus.go); the positions are those of src.
func Decode(src []byte) (*yaml.Node, error) {
	text, solidus := jsonWithoutSolidus(src)
	node, err := decodeText(text)
	if node != nil && solidus {
		if err := restoreSolidus(node, src); err != nil {
			return nil, err
		}
	}
	return node, err
}

func decodeText(src []byte) (*yaml.Node, error) {
	var node yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&node); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case err == nil:
		return nil, fmt.Errorf("a second document begins at line %d without a \"---\" line before it", more.Line)
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	return documentOrNil(&node), nil
}

// documentOrNil is doc, or nil when it has no content: nothing, or an
// empty null (not "~" or "null", which an author wrote).
func documentOrNil(doc *yaml.Node) *yaml.Node {
	if len(doc.Content) == 0 || (nodes.IsNull(doc.Content[0]) && doc.Content[0].Value == "") {
		return nil
	}
	return doc
}

// Equal compares two trees by content: kinds, tags and values (not
// styles, comments or positions).
func Equal(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value && a.ShortTag() == b.ShortTag()
	case yaml.AliasNode:
		return a.Value == b.Value
	}
	for i := range a.Content {
		if !Equal(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
