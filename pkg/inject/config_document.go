package inject

import (
	"bytes"
	"encoding/json"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// Document writes the injector as a SidecarInjection that ParseConfig
// reads back into an injector with the same template hash and settings:
// the template as injected (the image and native settings already applied
// to it, every parameter's default resolved) and the settings that choose
// what is injected. An admission policy carries it, so that the commands
// that ask "is it current?" read what the cluster runs.
//
// The embedded default is not spelled out: the document then has no
// template (which every reader takes as the default), keeps the image and
// native settings, and is written on one line. The template hash the
// policy stamps says which default it was (BuiltinTemplate), so the
// operator reads the policy, not the default twice.
func (in *Injector) Document() ([]byte, error) {
	written := in.given
	// Uninject's reach and the template's ConfigMap (resolved into the
	// template by now) are not what a policy injects.
	written.AllProfiles, written.TemplateConfigMap = false, ""
	builtin := in.isBuiltinDefault()
	if !builtin {
		// Applied to the template, which the document spells out.
		written.Image, written.Native = "", nil
	}
	doc, err := marshalNode(SidecarInjection{
		APIVersion: ConfigAPIVersion, Kind: ConfigKind,
		Metadata: ObjectMeta{Name: documentName(in.given.Profile)},
		Spec:     written,
	})
	if err != nil {
		return nil, err
	}
	if !builtin {
		spec := nodes.MapValue(doc, "spec")
		spec.Content = append(spec.Content, nodes.NewString("template"), in.template.document())
	}
	if builtin {
		doc.Style = yaml.FlowStyle
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if builtin {
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	return buf.Bytes(), nil
}

// marshalNode is v marshalled, as a YAML node with the fields in the
// order of v's type, styled as the rest of the document.
func marshalNode(v any) (*yaml.Node, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	node := doc.Content[0]
	var plain func(n *yaml.Node)
	plain = func(n *yaml.Node) {
		n.Style = 0
		for _, c := range n.Content {
			plain(c)
		}
	}
	plain(node)
	return node, nil
}

// document is the template as a partial Pod spec, in the fields
// parsePartialSpec reads. Parameters are written without their defaults:
// the template holds them at their fields.
func (t *Template) document() *yaml.Node {
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
	return m
}

// documentName names the document after its profile.
func documentName(profile string) string {
	if profile == "" {
		return "default"
	}
	return profile
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
