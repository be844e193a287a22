package local

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/kinject/kubectl-inject/pkg/inject"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// conversion collects the objects of --local -o json|yaml: the output is
// converted on request, as kubectl prints objects (one object as itself,
// several as a kind: List, keys in kubectl's order for YAML). Without -o
// the output stays as written.
type conversion struct {
	format  string
	objects []any
}

// add parses one processed document and keeps its object (a List's items,
// as kubectl flattens them). Documents with no object add nothing.
func (c *conversion) add(file string, index int, text []byte, entries []inject.Entry) {
	if len(entries) == 0 {
		return
	}
	node, err := kyaml.Parse(string(text))
	if err != nil || node.IsNil() {
		return // reported by the injection already
	}
	var obj any
	if err := node.YNode().Decode(&obj); err != nil {
		return
	}
	if m, ok := obj.(map[string]any); ok && m["kind"] == "List" {
		if items, ok := m["items"].([]any); ok {
			c.objects = append(c.objects, items...)
			return
		}
	}
	c.objects = append(c.objects, obj)
}

// write prints the collected objects.
func (c *conversion) write(w io.Writer) error {
	var v any = map[string]any{"apiVersion": "v1", "kind": "List", "items": c.objects}
	if len(c.objects) == 1 {
		v = c.objects[0]
	}
	var (
		out []byte
		err error
	)
	if c.format == "json" {
		out, err = json.MarshalIndent(v, "", "    ")
		out = append(out, '\n')
	} else {
		out, err = yaml.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("converting the output to %s: %w", c.format, err)
	}
	_, err = w.Write(out)
	return err
}
