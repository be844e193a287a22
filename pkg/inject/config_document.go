package inject

import (
	"bytes"
	"encoding/json"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
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
		spec.Content = append(spec.Content, nodes.NewString("template"), in.template.Document())
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

// documentName names the document after its profile.
func documentName(profile string) string {
	if profile == "" {
		return "default"
	}
	return profile
}
