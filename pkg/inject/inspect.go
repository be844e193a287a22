package inject

import (
	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Inspection is what a read-only report needs to know about one object:
// what injecting it now would do, and what its pod template records.
type Inspection struct {
	// Entry is the outcome injection would have (Unchanged: current;
	// Updated: injected with another template; Injected: not injected;
	// Skipped or Failed with a reason). Nothing is changed.
	Entry Entry
	// Status is the pod template's record, nil when it has none or it is
	// not valid (then Entry says why).
	Status *record.Status
	// Images maps the recorded sidecars (containers and init containers)
	// to their images, in the record's order.
	Images []NameImage
}

// ownRecord finds obj's pod template and the injector's profile's record
// on it; the record is nil when there is none or it is not valid.
func (in *Injector) ownRecord(obj *yaml.RNode) (*podTarget, *record.Status) {
	root := nodes.ResolveDocument(obj.YNode())
	path, ok := lookupPath(in.settings.PodTemplatePaths, nodes.ScalarField(root, "apiVersion"), nodes.ScalarField(root, "kind"))
	if !ok {
		return nil, nil
	}
	t, err := findPodTarget(root, path)
	if err != nil {
		return nil, nil
	}
	records, err := readRecords(t)
	own := findRecord(records, in.settings.Profile)
	if err != nil || own == nil {
		return nil, nil
	}
	return t, own.status
}

// NameImage is one container and its image.
type NameImage struct{ Name, Image string }

// Inspect reports on one object (not a List) without changing it: the
// injection runs on a copy.
func (in *Injector) Inspect(obj *yaml.RNode) Inspection {
	var out Inspection
	copied := obj.Copy()
	entries := in.ProcessNode(OpInject, copied, 0)
	if len(entries) > 0 {
		out.Entry = entries[0]
	}
	t, s := in.ownRecord(obj)
	if s == nil {
		return out
	}
	out.Status = s
	for _, l := range []struct {
		names []string
		field string
	}{{s.Containers, "containers"}, {s.InitContainers, "initContainers"}} {
		list := nodes.MapValue(t.spec, l.field)
		for _, name := range l.names {
			if c := nodes.ItemByName(list, name); c != nil {
				out.Images = append(out.Images, NameImage{Name: name, Image: nodes.ScalarField(c, "image")})
			}
		}
	}
	return out
}
