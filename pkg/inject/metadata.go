package inject

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// planMetadata adds labels and annotations (the status record last) to the
// pod template's metadata, creating maps as needed.
func planMetadata(t *podTarget, labels, annotations []template.KeyValue, status *record.Status, rest others, statusKey string) ([]yamltext.Edit, error) {
	if t.meta == nil {
		meta := nodes.NewMapping()
		if len(labels) > 0 {
			status.AddField(record.FieldLabels, nil)
			meta.Content = append(meta.Content, nodes.NewString("labels"), kvMapping(labels))
			status.Labels = keys(labels)
		}
		status.AddField(record.FieldAnnotations, nil)
		status.AddField(record.FieldMetadata, presentValue(t.template, "metadata"))
		status.Annotations = keys(annotations)
		ann := kvMapping(annotations)
		meta.Content = append(meta.Content, nodes.NewString("annotations"), ann)
		ann.Content = append(ann.Content, nodes.NewString(statusKey), nodes.NewString(status.Encode()))
		return []yamltext.Edit{placeField(t.template, "metadata", meta, beforeKeyFor(t.template, "metadata"))}, nil
	}
	rest.inherit(status, record.FieldMetadata)
	status.NoteEmpty(record.FieldMetadata, t.emptyText(t.meta)) // empty: annotations go in
	edits, err := planStringMap(t, "labels", labels, &status.Labels, status, record.FieldLabels, rest, "")
	if err != nil {
		return nil, err
	}
	more, err := planStringMap(t, "annotations", annotations, &status.Annotations, status, record.FieldAnnotations, rest, statusKey)
	return append(edits, more...), err
}

// planStringMap adds or overwrites entries of the labels or annotations
// map. When statusKey is set, the status record is added last; it is
// encoded only after every other part of status is known.
func planStringMap(t *podTarget, field string, kvs []template.KeyValue, added *[]string, status *record.Status, created string, rest others, statusKey string) ([]yamltext.Edit, error) {
	if len(kvs) == 0 && statusKey == "" {
		return nil, nil
	}
	m := nodes.MapValue(t.meta, field)
	if nodes.IsNull(m) {
		status.AddField(created, presentValue(t.meta, field))
		*added = keys(kvs)
		fresh := kvMapping(kvs)
		if statusKey != "" {
			fresh.Content = append(fresh.Content, nodes.NewString(statusKey), nodes.NewString(status.Encode()))
		}
		return []yamltext.Edit{placeField(t.meta, field, fresh, beforeKeyFor(t.meta, field))}, nil
	}
	if m.Kind == yaml.AliasNode {
		// Adding to an alias would change the anchor and every other use of
		// it, such as a selector.
		return nil, atNode(m, nodes.JoinField(t.field, "metadata."+field), &conflictError{fmt.Sprintf("%s: is an alias (*%s); refusing to edit the shared anchor", nodes.JoinField(t.field, "metadata."+field), m.Value)})
	}
	if m.Kind != yaml.MappingNode {
		return nil, atNode(m, nodes.JoinField(t.field, "metadata."+field), fmt.Errorf("%s: must be a mapping", nodes.JoinField(t.field, "metadata."+field)))
	}
	rest.inherit(status, created)
	// Something goes in (the early return above): an empty map laid out
	// across lines is noted, to come back as it was.
	status.NoteEmpty(created, t.emptyText(m))
	var edits []yamltext.Edit
	for _, kv := range kvs {
		existing := nodes.MapValue(m, kv.Key)
		switch {
		case existing == nil:
			*added = append(*added, kv.Key)
			edits = append(edits, yamltext.Insert(m, nil, kv.Key, nodes.NewString(kv.Value)))
		case existing.Value != kv.Value || existing.Kind != yaml.ScalarNode:
			recordChanged(status, field, kv.Key, existing.Value)
			edits = append(edits, yamltext.Set(existing, kv.Value))
		}
	}
	if statusKey != "" {
		edits = append(edits, yamltext.Insert(m, nil, statusKey, nodes.NewString(status.Encode())))
	}
	return edits, nil
}

func recordChanged(status *record.Status, field, key, old string) {
	if status.Changed == nil {
		status.Changed = &record.Changed{}
	}
	target := &status.Changed.Labels
	if field == "annotations" {
		target = &status.Changed.Annotations
	}
	if *target == nil {
		*target = map[string]string{}
	}
	(*target)[key] = old
}

func kvMapping(kvs []template.KeyValue) *yaml.Node {
	m := nodes.NewMapping()
	for _, kv := range kvs {
		m.Content = append(m.Content, nodes.NewString(kv.Key), nodes.NewString(kv.Value))
	}
	return m
}

func keys(kvs []template.KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}
