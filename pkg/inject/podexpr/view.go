package podexpr

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The Pod as the subset's evaluator reads it: views over the pod
// template's nodes that read what an expression touches and nothing else,
// and that see exactly what podObject's plain values hold (null fields
// absent, merge keys skipped, the profile's own items and annotations
// left out). An alias, a key that is not a scalar or a document node is
// left to cel-go (errUnsure), where podObject's conversion decides.

// Pod is the pod template an expression reads, seen as a Pod: the
// subset's view of its nodes, or podObject's plain values for cel-go,
// each made when first asked for, once per document.
type Pod struct {
	// Meta and Spec are the pod template's metadata (nil when it has none)
	// and spec.
	Meta, Spec *yaml.Node
	// Own is what the profile itself injected, which the expression does
	// not see; nil when the template carries no injection of it.
	Own *Own

	viewed  bool
	subset  subsetMap
	viewErr error
	plain   map[string]any
}

// Own names what a profile injected into a pod template, as its record
// lists it, to be left out of what an expression sees.
type Own struct {
	// Items are names of list items, by spec field (containers,
	// initContainers, volumes).
	Items map[string][]string
	// Keys are keys of metadata maps, by field (labels, annotations; the
	// record's own annotation among them).
	Keys map[string][]string
}

func (p *Pod) view() (subsetMap, error) {
	if !p.viewed {
		p.viewed = true
		p.subset, p.viewErr = podView(p)
	}
	return p.subset, p.viewErr
}

// viewValue is the value of n as plainValue gives it, without converting
// a mapping or a sequence.
func viewValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.MappingNode:
		return nodeMap{n}, nil
	case yaml.SequenceNode:
		return nodeList{n}, nil
	case yaml.ScalarNode:
		return scalarValue(n), nil
	}
	return nil, errUnsure
}

// nodeMap is a mapping node read as a map.
type nodeMap struct{ n *yaml.Node }

// get finds the last non-null value at key, as plainValue keeps it.
func (m nodeMap) get(key string) (any, bool, error) {
	c := m.n.Content
	for i := len(c) - 2; i >= 0; i -= 2 {
		k := c[i]
		if k.Kind != yaml.ScalarNode {
			return nil, false, errUnsure
		}
		if k.Value != key || k.Value == "<<" && k.Tag != "!!str" {
			continue
		}
		v, err := viewValue(c[i+1])
		if err != nil {
			return nil, false, err
		}
		if v != nil {
			return v, true, nil
		}
	}
	return nil, false, nil
}

func (m nodeMap) size() (int, error) {
	keys := map[string]bool{}
	c := m.n.Content
	for i := 0; i+1 < len(c); i += 2 {
		k := c[i]
		if k.Kind != yaml.ScalarNode {
			return 0, errUnsure
		}
		if k.Value == "<<" && k.Tag != "!!str" {
			continue
		}
		v, err := viewValue(c[i+1])
		if err != nil {
			return 0, err
		}
		if v != nil {
			keys[k.Value] = true
		}
	}
	return len(keys), nil
}

// nodeList is a sequence node read as a list.
type nodeList struct{ n *yaml.Node }

func (l nodeList) len() int { return len(l.n.Content) }

func (l nodeList) at(i int) (any, error) { return viewValue(l.n.Content[i]) }

// fieldMap is a map with some fields replaced or removed: the Pod, and
// the parts of it without the profile's own items.
type fieldMap struct {
	base subsetMap // nil: only the fields below
	// fields replace the base's; a nil value removes the field
	fields map[string]any
	// dropped keys are absent (labels and annotations the profile wrote)
	dropped map[string]bool
}

func (m fieldMap) get(key string) (any, bool, error) {
	if m.dropped[key] {
		return nil, false, nil
	}
	if v, ok := m.fields[key]; ok {
		return v, v != nil, nil
	}
	if m.base == nil {
		return nil, false, nil
	}
	return m.base.get(key)
}

func (m fieldMap) size() (int, error) {
	if m.base == nil {
		n := 0
		for k, v := range m.fields {
			if v != nil && !m.dropped[k] {
				n++
			}
		}
		return n, nil
	}
	nm, ok := m.base.(nodeMap)
	if !ok {
		return 0, errUnsure
	}
	keys := map[string]bool{}
	c := nm.n.Content
	for i := 0; i+1 < len(c); i += 2 {
		keys[c[i].Value] = true
	}
	for k := range m.fields {
		keys[k] = true
	}
	n := 0
	for k := range keys {
		if _, ok, err := m.get(k); err != nil {
			return 0, err
		} else if ok {
			n++
		}
	}
	return n, nil
}

// podView is the pod template seen as a Pod, as podObject gives it.
func podView(p *Pod) (subsetMap, error) {
	// A metadata or spec that is not a mapping (null, say) is a field
	// podObject keeps with its value: left to cel-go.
	fields := map[string]any{"apiVersion": "v1", "kind": "Pod"}
	if p.Meta != nil {
		if p.Meta.Kind != yaml.MappingNode {
			return nil, errUnsure
		}
		fields["metadata"] = nodeMap{p.Meta}
	}
	if p.Spec == nil || p.Spec.Kind != yaml.MappingNode {
		return nil, errUnsure
	}
	spec := nodeMap{p.Spec}
	fields["spec"] = spec
	if p.Own == nil {
		return fieldMap{fields: fields}, nil
	}
	var err error
	if fields["spec"], err = withoutNamed(spec, p.Own.Items); err != nil {
		return nil, err
	}
	if meta, ok := fields["metadata"].(nodeMap); ok {
		if fields["metadata"], err = withoutKeys(meta, p.Own.Keys); err != nil {
			return nil, err
		}
	}
	return fieldMap{fields: fields}, nil
}

// withoutNamed is spec without the items named in names, by list, as
// dropNamed removes them.
func withoutNamed(spec nodeMap, names map[string][]string) (subsetMap, error) {
	out := fieldMap{base: spec, fields: map[string]any{}}
	for field, list := range names {
		if len(list) == 0 {
			continue
		}
		v, found, err := spec.get(field)
		if err != nil {
			return nil, err
		}
		items, ok := v.(nodeList)
		if !found || !ok {
			continue
		}
		drop := map[string]bool{}
		for _, n := range list {
			drop[n] = true
		}
		kept := sliceList{}
		for i := 0; i < items.len(); i++ {
			item, err := items.at(i)
			if err != nil {
				return nil, err
			}
			if m, ok := item.(nodeMap); ok {
				name, _, err := m.get("name")
				if err != nil {
					return nil, err
				}
				if _, composite := name.(subsetMap); composite {
					return nil, errUnsure
				}
				if _, composite := name.(subsetList); composite {
					return nil, errUnsure
				}
				if drop[fmt.Sprint(name)] {
					continue
				}
			}
			kept = append(kept, item)
		}
		out.fields[field] = kept
	}
	return out, nil
}

// withoutKeys is meta with keys removed from its maps, by field.
func withoutKeys(meta nodeMap, keys map[string][]string) (subsetMap, error) {
	out := fieldMap{base: meta, fields: map[string]any{}}
	for field, list := range keys {
		if len(list) == 0 {
			continue
		}
		v, found, err := meta.get(field)
		if err != nil {
			return nil, err
		}
		m, ok := v.(nodeMap)
		if !found || !ok {
			continue
		}
		dropped := map[string]bool{}
		for _, k := range list {
			dropped[k] = true
		}
		out.fields[field] = fieldMap{base: m, dropped: dropped}
	}
	return out, nil
}
