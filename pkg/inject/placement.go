package inject

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// beforeKeyFor keeps the usual field order when a field is created:
// initContainers, containers, volumes; metadata before spec; labels before
// annotations. A created field goes before the first of the fields that
// follow it, so that fields several profiles create stand in the same
// order whichever profile created which: removing one profile then leaves
// what the others would have written alone.
func beforeKeyFor(m *yaml.Node, field string) *yaml.Node {
	for _, next := range fieldsAfter[field] {
		if key, _ := nodes.MapLookup(m, next); key != nil {
			return key
		}
	}
	return nil
}

// fieldsAfter lists, for each field injection may create, the fields that
// come after it.
var fieldsAfter = map[string][]string{
	"initContainers": {"containers", "volumes"},
	"containers":     {"volumes"},
	"metadata":       {"spec"},
	"labels":         {"annotations"},
}

// placeField sets field of mapping m to value: a new field before the key
// before, or the value of a field that is present but empty ("volumes:").
func placeField(m *yaml.Node, field string, value, before *yaml.Node) yamltext.Edit {
	if _, old := nodes.MapLookup(m, field); old != nil {
		return yamltext.Fill(m, old, value)
	}
	return yamltext.Insert(m, before, field, value)
}

// presentValue returns the value of field when m has the key (an empty
// value, here), nil when it has not.
func presentValue(m *yaml.Node, field string) *yaml.Node {
	key, value := nodes.MapLookup(m, field)
	if key == nil {
		return nil
	}
	return value
}
