package inject

import (
	"bytes"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Document writes the injector as a SidecarInjection that ParseConfig
// reads back into an injector with the same template hash and settings:
// the template as injected (the image and native settings already applied
// to it, every parameter's default resolved) and the settings that choose
// what is injected. An admission policy carries it, so that the commands
// that ask "is it current?" read what the cluster runs.
func (in *Injector) Document() ([]byte, error) {
	s := in.settings
	spec := newMapping()
	set := func(key string, value *yaml.Node) { spec.Content = append(spec.Content, newString(key), value) }
	scalar := func(key, value string) {
		if value != "" {
			set(key, newString(value))
		}
	}
	list := func(key string, values []string) {
		if len(values) == 0 {
			return
		}
		seq := newSequence()
		for _, v := range values {
			seq.Content = append(seq.Content, newString(v))
		}
		set(key, seq)
	}
	flag := func(key string, on bool) {
		if on {
			set(key, newString("true"))
		}
	}
	scalar("profile", s.Profile)
	scalar("mode", string(s.Policy.Mode))
	list("kinds", s.Policy.Kinds)
	list("apiGroups", s.Policy.APIGroups)
	list("namespaces", s.Policy.Namespaces)
	list("excludeNamespaces", s.Policy.ExcludeNamespaces)
	scalar("selector", s.Policy.Selector)
	flag("injectHostNetwork", s.Policy.InjectHostNetwork)
	flag("strict", s.Strict)
	var paths []string
	for _, p := range s.Paths {
		paths = append(paths, p.String())
	}
	list("podTemplatePaths", paths)
	set("template", in.template.document())

	meta := newMapping()
	meta.Content = append(meta.Content, newString("name"), newString(documentName(s.Profile)))
	doc := newMapping()
	doc.Content = append(doc.Content,
		newString("apiVersion"), newString(ConfigAPIVersion),
		newString("kind"), newString(ConfigKind),
		newString("metadata"), meta,
		newString("spec"), spec)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// document is the template as a partial Pod spec, in the fields
// parsePartialSpec reads. Parameters are written without their defaults:
// the template holds them at their fields.
func (t *Template) document() *yaml.Node {
	m := newMapping()
	add := func(key string, value *yaml.Node) { m.Content = append(m.Content, newString(key), value) }
	items := func(key string, nodes []*yaml.Node) {
		if len(nodes) == 0 {
			return
		}
		seq := newSequence()
		for _, n := range nodes {
			seq.Content = append(seq.Content, deepCopy(n))
		}
		add(key, seq)
	}
	items("containers", t.Containers)
	items("initContainers", t.InitContainers)
	items("volumes", t.Volumes)
	if len(t.Labels)+len(t.Annotations) > 0 {
		meta := newMapping()
		for _, group := range []struct {
			key   string
			pairs []KeyValue
		}{{"labels", t.Labels}, {"annotations", t.Annotations}} {
			if len(group.pairs) == 0 {
				continue
			}
			pairs := newMapping()
			for _, kv := range group.pairs {
				pairs.Content = append(pairs.Content, newString(kv.Key), newString(kv.Value))
			}
			meta.Content = append(meta.Content, newString(group.key), pairs)
		}
		add("metadata", meta)
	}
	if len(t.Parameters) > 0 {
		seq := newSequence()
		for _, p := range t.Parameters {
			item := newMapping()
			item.Content = append(item.Content,
				newString("annotation"), newString(p.Annotation),
				newString("field"), newString(p.Field),
				newString("type"), newString(string(p.Type)))
			if p.Expression != "" {
				item.Content = append(item.Content, newString("expression"), newString(p.Expression))
			}
			seq.Content = append(seq.Content, item)
		}
		add("parameters", seq)
	}
	if len(t.ReservedPorts) > 0 {
		seq := newSequence()
		for _, r := range t.ReservedPorts {
			item := newMapping()
			item.Content = append(item.Content,
				newString("port"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(r.Port)},
				newString("protocol"), newString(r.Protocol),
				newString("container"), newString(r.Container))
			if r.Description != "" {
				item.Content = append(item.Content, newString("description"), newString(r.Description))
			}
			seq.Content = append(seq.Content, item)
		}
		add("reservedPorts", seq)
	}
	return m
}

// documentName names the document after its profile.
func documentName(profile string) string {
	if profile == "" {
		return "default"
	}
	return profile
}
