package inject

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
)

// DescribeNonObject says what a node that is not an object is ("null",
// "a list"): a List item, a ResourceList item, a metadata field.
func DescribeNonObject(n *yaml.Node) string { return nodes.DescribeNonObject(n) }
