package template

import (
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Document is the template as a partial Pod spec, in the fields
// ParsePartialSpec reads. Parameters are written without their defaults:
// the template holds them at their fields.
func (t *Template) Document() *yaml.Node {
	m := nodes.NewMapping()
	add := func(key string, value *yaml.Node) { m.Content = append(m.Content, nodes.NewString(key), value) }
	items := func(key string, nodes []*yaml.Node) {
		var copies []*yaml.Node
		for _, n := range nodes {
			copies = append(copies, yamltext.Copy(n))
		}
		setSequence(m, key, copies)
	}
	items("containers", t.Containers)
	items("initContainers", t.InitContainers)
	items("volumes", t.Volumes)
	if len(t.Labels)+len(t.Annotations) > 0 {
		meta := nodes.NewMapping()
		for _, group := range []struct {
			key   string
			pairs []KeyValue
		}{{"labels", t.Labels}, {"annotations", t.Annotations}} {
			if len(group.pairs) == 0 {
				continue
			}
			pairs := nodes.NewMapping()
			for _, kv := range group.pairs {
				pairs.Content = append(pairs.Content, nodes.NewString(kv.Key), nodes.NewString(kv.Value))
			}
			meta.Content = append(meta.Content, nodes.NewString(group.key), pairs)
		}
		add("metadata", meta)
	}
	var params []*yaml.Node
	for _, p := range t.Parameters {
		params = append(params, fields(
			"annotation", nodes.NewString(p.Annotation), "field", nodes.NewString(p.Field), "type", nodes.NewString(string(p.Type)),
			"expression", optional(p.Expression)))
	}
	setSequence(m, "parameters", params)
	var ports []*yaml.Node
	for _, r := range t.ReservedPorts {
		ports = append(ports, fields(
			"port", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(r.Port)},
			"protocol", nodes.NewString(r.Protocol), "container", nodes.NewString(r.Container),
			"description", optional(r.Description)))
	}
	setSequence(m, "reservedPorts", ports)
	if t.Drain != nil {
		add("drain", t.Drain.document())
	}
	return m
}

// setSequence adds key: [items...] to the mapping m, unless there are no
// items.
func setSequence(m *yaml.Node, key string, items []*yaml.Node) {
	if len(items) > 0 {
		m.Content = append(m.Content, nodes.NewString(key), nodes.NewSequence(items...))
	}
}

// fields is a mapping of key, value pairs; a nil value leaves its key out.
func fields(pairs ...any) *yaml.Node {
	m := nodes.NewMapping()
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := pairs[i+1].(*yaml.Node); v != nil {
			m.Content = append(m.Content, nodes.NewString(pairs[i].(string)), v)
		}
	}
	return m
}

// optional is s as a string node, or nil when s is empty.
func optional(s string) *yaml.Node {
	if s == "" {
		return nil
	}
	return nodes.NewString(s)
}
