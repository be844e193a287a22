package inject

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The readers here take any document a user may write. kyaml's own getters
// (GetKind, GetName, GetAnnotations, ...) assume that the document and its
// metadata are mappings and panic on a list where one should be, so input
// is read with these, or checked with CheckObjectShape before kyaml reads
// it.

// ObjectKind reads the kind of a document that is a mapping, and is empty
// for anything else.
func ObjectKind(doc *yaml.RNode) string {
	return scalarField(documentRoot(doc), "kind")
}

// ObjectName reads metadata.namespace and metadata.name of a document,
// empty where the document, its metadata or the field is something else.
func ObjectName(doc *yaml.RNode) (namespace, name string) {
	meta := mapValue(documentRoot(doc), "metadata")
	return scalarField(meta, "namespace"), scalarField(meta, "name")
}

// CheckObjectShape reports, naming the field, a document that is not an
// object kyaml can read: a mapping whose metadata, metadata.annotations
// and metadata.labels are mappings when they are set at all.
func CheckObjectShape(doc *yaml.RNode) error {
	root := documentRoot(doc)
	if root == nil || root.Kind != yaml.MappingNode {
		return fmt.Errorf("not an object (%s)", DescribeNonObject(root))
	}
	meta := mapValue(root, "metadata")
	if isNull(meta) {
		return nil
	}
	if meta.Kind != yaml.MappingNode {
		return fmt.Errorf("metadata: must be a mapping, not %s", DescribeNonObject(meta))
	}
	for _, field := range []string{"annotations", "labels"} {
		if v := mapValue(meta, field); !isNull(v) && v.Kind != yaml.MappingNode {
			return fmt.Errorf("metadata.%s: must be a mapping, not %s", field, DescribeNonObject(v))
		}
	}
	return nil
}

// documentRoot is the top node of doc, nil for an empty document.
func documentRoot(doc *yaml.RNode) *yaml.Node {
	if doc == nil {
		return nil
	}
	return resolveDocument(doc.YNode())
}
