package admission

import (
	"bytes"
	"encoding/json"
	"fmt"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// Objects returns the policy's objects as JSON, in the order to apply them:
// each policy before its binding.
func (p *Policy) Objects() ([][]byte, error) {
	out := make([][]byte, len(p.objects))
	for i, o := range p.objects {
		b, err := marshal(o, "")
		if err != nil {
			return nil, err
		}
		out[i] = bytes.TrimSuffix(b, []byte("\n"))
	}
	return out, nil
}

// marshal is json.Marshal without HTML escaping: CEL's && and < stay
// readable in -o json.
func marshal(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the policy: %w", err)
	}
	return buf.Bytes(), nil
}

// YAML renders the objects as a multi-document YAML stream, as
// kubectl get -o yaml writes fields (sorted).
func (p *Policy) YAML() ([]byte, error) {
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for i, o := range objs {
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			return nil, fmt.Errorf("encoding the policy: %w", err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

// JSON renders the objects as a kind: List, indented, as kubectl does for
// several objects.
func (p *Policy) JSON() ([]byte, error) {
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	items := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	return marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "    ")
}

// Nodes returns the objects as kyaml nodes, for KRM functions.
func (p *Policy) Nodes() ([]*kyaml.RNode, error) {
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	out := make([]*kyaml.RNode, len(objs))
	for i, o := range objs {
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			return nil, fmt.Errorf("encoding the policy: %w", err)
		}
		if out[i], err = kyaml.Parse(string(y)); err != nil {
			return nil, fmt.Errorf("encoding the policy: %w", err)
		}
	}
	return out, nil
}
