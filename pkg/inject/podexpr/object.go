package podexpr

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The Pod as plain values (maps, lists, int64, float64, string, bool,
// nil), as a Program reads it: cel-go, in the process or in kinject-cel.

func (p *Pod) object() map[string]any {
	if p.plain == nil {
		p.plain = podObject(p)
	}
	return p.plain
}

// podObject is the pod template seen as a Pod, the object an expression
// reads: the template's metadata and spec as plain values, without what
// the pod's Own names, so that an update computes what the first
// injection did.
func podObject(p *Pod) map[string]any {
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod"}
	seen := map[*yaml.Node]any{}
	if p.Meta != nil {
		obj["metadata"] = plainValue(p.Meta, seen)
	}
	obj["spec"] = plainValue(p.Spec, seen)
	if p.Own == nil {
		return obj
	}
	if spec, ok := obj["spec"].(map[string]any); ok {
		spec = shallowCopy(spec)
		obj["spec"] = spec
		for field, names := range p.Own.Items {
			dropNamed(spec, field, names)
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		meta = shallowCopy(meta)
		obj["metadata"] = meta
		for field, keys := range p.Own.Keys {
			if m, ok := meta[field].(map[string]any); ok && len(keys) > 0 {
				kept := shallowCopy(m)
				for _, k := range keys {
					delete(kept, k)
				}
				meta[field] = kept
			}
		}
	}
	return obj
}

// plainValue converts a node to the plain values cel-go adapts (maps,
// lists, strings, int64, float64, bool, nil). The target of an alias is
// converted once and shared by every alias of it: an alias bomb stays as
// small as it is written (decoding it would expand it), and an expression
// reads only what it touches. dropNamed and podObject copy what they
// change, so a shared value is never edited.
func plainValue(n *yaml.Node, seen map[*yaml.Node]any) any {
	if v, ok := seen[n]; ok {
		return v
	}
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			v = plainValue(n.Content[0], seen)
		}
	case yaml.AliasNode:
		seen[n] = nil // a recursive alias reads as null
		v = plainValue(n.Alias, seen)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		seen[n] = m
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag != "!!str" {
				continue // merge keys are not Kubernetes data
			}
			v := plainValue(n.Content[i+1], seen)
			if v == nil {
				// A field written null is absent from the Pod the API
				// server decodes: has() is false for it at admission, and
				// so it is here.
				continue
			}
			m[k.Value] = v
		}
		return m
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		seen[n] = list
		for i, item := range n.Content {
			list[i] = plainValue(item, seen)
		}
		return list
	case yaml.ScalarNode:
		v = scalarValue(n)
	}
	seen[n] = v
	return v
}

// shallowCopy copies m, whose values may be shared with other maps.
func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// dropNamed removes the items named in names from the list spec[field].
func dropNamed(spec map[string]any, field string, names []string) {
	list, ok := spec[field].([]any)
	if !ok || len(names) == 0 {
		return
	}
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	kept := make([]any, 0, len(list)) // a copy: list may be shared
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && drop[fmt.Sprint(m["name"])] {
			continue
		}
		kept = append(kept, item)
	}
	spec[field] = kept
}
