package inject

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// conflictError is a clash between the template and the pod.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }

// profileTarget is a pod template seen by one profile, beside the others
// injected into it.
type profileTarget struct {
	*podTarget
	profile string
	rest    others
}

// conflict names both profiles when another profile owns what this one
// would add.
func (pt profileTarget) conflict(what, owner string) error {
	return &conflictError{profileConflict(what, naming.ProfileName(owner), pt.profile)}
}

// checkKeys refuses labels and annotations another profile added or
// changed: removing either profile would take the other's value with it.
func (pt profileTarget) checkKeys(tpl *template.Template) error {
	for _, k := range MetadataConflictKinds() {
		for _, kv := range k.TemplateKeys(tpl) {
			if owner, ok := pt.rest.owner(k, kv.Key); ok {
				return pt.conflict(k.Subject(kv.Key, nodes.JoinField(pt.field, "metadata."+k.MetadataField())), owner)
			}
		}
	}
	return nil
}

func hasKeyValue(kvs []template.KeyValue, key string) bool {
	for _, kv := range kvs {
		if kv.Key == key {
			return true
		}
	}
	return false
}

// missingItems returns the template items (containers or volumes) the pod
// lacks; they are copied when the edits are made. An item of the same name
// that is identical counts as present; one that differs is a conflict,
// since we did not inject it. An item another profile added is a conflict
// either way.
func (pt profileTarget) missingItems(items []*yaml.Node, field string, lists ...*yaml.Node) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for _, item := range items {
		name := nodes.ScalarField(item, "name")
		var existing *yaml.Node
		for _, list := range lists {
			if existing = nodes.ItemByName(list, name); existing != nil {
				break
			}
		}
		if existing == nil {
			out = append(out, item)
			continue
		}
		kind := ItemConflictKind(field)
		if owner, ok := pt.rest.owner(kind, name); ok {
			return nil, pt.conflict(kind.Subject(name, pt.specField(field)), owner)
		}
		if sameItem(existing, item) {
			continue
		}
		if field == "volumes" {
			// Name both: the two definitions are usually close.
			return nil, atNode(existing, pt.specField(field), &conflictError{message(MessageVolumeDiffers,
				pt.specField(field), strconv.Quote(name), compactJSON(existing), compactJSON(item))})
		}
		return nil, atNode(existing, pt.specField(field), &conflictError{message(MessageContainerExists, pt.specField(field), strconv.Quote(name))})
	}
	return out, nil
}

// sameItem reports whether the pod's item holds the template's item:
// every field the template sets has the template's value, and the pod's
// item may set more. The API server defaults a Pod before admission
// (imagePullPolicy, a port's protocol, resources: {}) and stores
// quantities in canonical form ("1000m" as "1"), so this is what
// "identical" can mean for a Pod as the cluster has it; the admission
// policy decides the same way (pkg/admission, identicalExpr).
func sameItem(existing, item *yaml.Node) bool {
	return holds(nodes.PlainValue(existing), nodes.PlainValue(item), nil)
}

// quantityFields are the fields of containers and volumes whose values
// are resource quantities: the keys of resources.limits and
// resources.requests, and emptyDir.sizeLimit.
var quantityFields = map[string]bool{"resources.limits": true, "resources.requests": true, "emptyDir.sizeLimit": true}

// IsQuantityField reports whether the field at path (below a container or
// volume) holds a resource quantity, compared as a quantity ("1000m" is
// "1") where the core and the admission policy compare items.
func IsQuantityField(path []string) bool {
	return len(path) > 0 && (quantityFields[strings.Join(path[:len(path)-1], ".")] || quantityFields[strings.Join(path, ".")])
}

// IsQuantityFieldName reports whether path is one of the quantity fields
// itself: a mapping of quantities by resource name (resources.limits), or
// emptyDir.sizeLimit.
func IsQuantityFieldName(path []string) bool {
	return quantityFields[strings.Join(path, ".")]
}

// holds reports whether got holds want: every key of a mapping (an empty
// mapping: the key is set), a list of words whole, another list item for
// item with the same length, a scalar equal (a quantity as a quantity).
// path is the field path from the item.
func holds(got, want any, path []string) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, set := g[k]
			if !set || gv == nil {
				return false
			}
			if !holds(gv, wv, append(append([]string(nil), path...), k)) {
				return false
			}
		}
		return true
	case []any:
		g, _ := got.([]any)
		if got != nil && g == nil {
			return false
		}
		if words(w) {
			return len(g) == len(w) && sameValue(g, w)
		}
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if _, empty := w[i].(map[string]any); empty && len(w[i].(map[string]any)) == 0 {
				continue // an empty mapping in a list holds whatever the item is
			}
			if !holds(g[i], w[i], path) {
				return false
			}
		}
		return true
	}
	if got == nil {
		return false
	}
	if IsQuantityField(path) {
		gs, ws := fmt.Sprint(got), fmt.Sprint(want)
		return gs == ws || grammar.SameQuantity(gs, ws)
	}
	return sameValue(got, want)
}

// words reports whether a list holds only strings (args, command): such a
// list is compared whole.
func words(l []any) bool {
	for _, v := range l {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

func sameValue(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// compactJSON renders a node as compact JSON for messages.
func compactJSON(n *yaml.Node) string { return CompactJSON(nodes.PlainValue(n)) }

// CompactJSON is how messages write an item (a volume that differs):
// compact JSON, keys sorted, HTML escaped as encoding/json escapes it.
func CompactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}
