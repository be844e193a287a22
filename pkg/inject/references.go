package inject

import (
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// InjectedReferences lists, as References does, what the parts injected
// into obj need: the items named by obj's own status record, as they are
// in obj (overrides included). It is empty when obj is not injected.
func (in *Injector) InjectedReferences(obj *yaml.RNode) []template.Reference {
	t, s := in.ownRecord(obj)
	if s == nil {
		return nil
	}
	pick := func(field string, names []string) []*yaml.Node {
		var out []*yaml.Node
		for _, name := range names {
			if n := nodes.ItemByName(nodes.MapValue(t.spec, field), name); n != nil {
				out = append(out, n)
			}
		}
		return out
	}
	return template.ReferencesOf(pick("containers", s.Containers), pick("initContainers", s.InitContainers), pick("volumes", s.Volumes))
}
