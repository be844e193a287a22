package inject

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
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
	return nodes.ScalarField(documentRoot(doc), "kind")
}

// ObjectName reads metadata.namespace and metadata.name of a document,
// empty where the document, its metadata or the field is something else.
func ObjectName(doc *yaml.RNode) (namespace, name string) {
	meta := nodes.MapValue(documentRoot(doc), "metadata")
	return nodes.ScalarField(meta, "namespace"), nodes.ScalarField(meta, "name")
}

// CheckObjectShape reports, naming the field, a document that is not an
// object kyaml can read: a mapping whose metadata, metadata.annotations
// and metadata.labels are mappings when they are set at all.
func CheckObjectShape(doc *yaml.RNode) error {
	root := documentRoot(doc)
	if root == nil || root.Kind != yaml.MappingNode {
		return fmt.Errorf("not an object (%s)", nodes.DescribeNonObject(root))
	}
	meta := nodes.MapValue(root, "metadata")
	if nodes.IsNull(meta) {
		return nil
	}
	if meta.Kind != yaml.MappingNode {
		return fmt.Errorf("metadata: must be a mapping, not %s", nodes.DescribeNonObject(meta))
	}
	for _, field := range []string{"annotations", "labels"} {
		if v := nodes.MapValue(meta, field); !nodes.IsNull(v) && v.Kind != yaml.MappingNode {
			return fmt.Errorf("metadata.%s: must be a mapping, not %s", field, nodes.DescribeNonObject(v))
		}
	}
	return nil
}

// documentRoot is the top node of doc, nil for an empty document.
func documentRoot(doc *yaml.RNode) *yaml.Node {
	if doc == nil {
		return nil
	}
	return nodes.ResolveDocument(doc.YNode())
}
