package local

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// conversion collects the objects of --local -o json|yaml: the output is
// converted on request, as kubectl prints objects (one object as itself,
// several as a kind: List, keys in kubectl's order for YAML). Without -o
// the output stays as written.
type conversion struct {
	format  string
	objects []any
}

// add parses one processed document as the core reads documents
// (inject.ParseDocument: JSON's "\/" escape included) and keeps its
// object (a List's items, as kubectl flattens them). Documents with no
// object add nothing, nor does a document skipped as no Kubernetes object
// or one the core could not parse (its entry says so already). Any other document that cannot be converted is
// an error: its objects are not in the output.
func (c *conversion) add(text []byte, entries []inject.Entry) error {
	if len(entries) == 0 || notKubernetes(entries) {
		return nil
	}
	node, err := inject.ParseDocument(text)
	switch {
	case err != nil && unparsed(entries):
		return nil
	case err != nil:
		return fmt.Errorf("cannot convert the output to %s: %w", c.format, err)
	case node == nil:
		return nil
	}
	var obj any
	if err := node.YNode().Decode(&obj); err != nil {
		return fmt.Errorf("cannot convert the output to %s: %w", c.format, err)
	}
	if m, ok := obj.(map[string]any); ok && m["kind"] == "List" {
		if items, ok := m["items"].([]any); ok {
			c.objects = append(c.objects, items...)
			return nil
		}
	}
	c.objects = append(c.objects, obj)
	return nil
}

// notKubernetes reports whether a document was skipped as no Kubernetes
// object (a values file in a walked directory): it is not an object of
// the output either.
func notKubernetes(entries []inject.Entry) bool {
	for _, e := range entries {
		if e.Action != inject.Skipped || e.Reason != inject.ReasonNotKubernetes {
			return false
		}
	}
	return true
}

// unparsed reports whether the core failed a document because it could
// not read it (not YAML, too large).
func unparsed(entries []inject.Entry) bool {
	for _, e := range entries {
		if e.Action == inject.Failed && (e.Reason == inject.ReasonInvalidYAML || e.Reason == inject.ReasonTooLarge) {
			return true
		}
	}
	return false
}

// failConversion turns the entries of a document that could not be
// converted into errors that say so: the report names the file, the line
// and the document, and the object counts as failed.
func failConversion(entries []inject.Entry, err error) {
	for i := range entries {
		entries[i].Action, entries[i].Reason, entries[i].Message = inject.Failed, inject.ReasonInvalidYAML, err.Error()
	}
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
