package inject

import (
	"maps"
	"slices"

	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// statusIntact reports whether everything the record lists is still there.
// A record whose parts were removed by hand is stale even when its template
// hash is current.
func statusIntact(t *podTarget, s *record.Status) bool {
	for _, l := range []struct {
		names []string
		field string
	}{{s.Containers, "containers"}, {s.InitContainers, "initContainers"}, {s.Volumes, "volumes"}} {
		list := nodes.MapValue(t.spec, l.field)
		for _, name := range l.names {
			if nodes.ItemByName(list, name) == nil {
				return false
			}
		}
	}
	return true
}

// planUninject computes the edits that remove exactly what a profile's
// record lists: the items and keys added, the values changed, the fields
// created. An annotation that another profile also claims (the
// default-container annotation) stays for it.
func planUninject(t *podTarget, own profileRecord, rest others) []yamltext.Edit {
	s := *own.status
	if len(rest) > 0 {
		s.Annotations = nil
		for _, k := range own.status.Annotations {
			if !rest.claims(k) {
				s.Annotations = append(s.Annotations, k)
			}
		}
	}
	return planRemove(t, &s, []string{own.key})
}

// planUninjectAll removes every profile's injection at once.
func planUninjectAll(t *podTarget, records []profileRecord) []yamltext.Edit {
	merged := &record.Status{}
	keys := make([]string, 0, len(records))
	for _, r := range records {
		keys = append(keys, r.key)
		s := r.status
		merged.Containers = append(merged.Containers, s.Containers...)
		merged.InitContainers = append(merged.InitContainers, s.InitContainers...)
		merged.Volumes = append(merged.Volumes, s.Volumes...)
		merged.Labels = appendNew(merged.Labels, s.Labels...)
		merged.Annotations = appendNew(merged.Annotations, s.Annotations...)
		for _, f := range s.Created {
			merged.AddField(f, nil)
		}
		for _, f := range s.Null {
			merged.AddField(f, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: s.NullToken(f)})
		}
		for f, text := range s.Empty {
			merged.NoteEmpty(f, text)
		}
		if s.Changed != nil {
			for k, v := range s.Changed.Labels {
				recordChanged(merged, "labels", k, v)
			}
			for k, v := range s.Changed.Annotations {
				recordChanged(merged, "annotations", k, v)
			}
		}
	}
	return planRemove(t, merged, keys)
}

func appendNew(list []string, more ...string) []string {
	for _, m := range more {
		found := false
		for _, l := range list {
			found = found || l == m
		}
		if !found {
			list = append(list, m)
		}
	}
	return list
}

// planRemove plans the removal of what s lists and of the status keys.
func planRemove(t *podTarget, s *record.Status, statusKeys []string) []yamltext.Edit {
	var edits []yamltext.Edit
	for _, l := range []struct {
		names   []string
		field   string
		created string
	}{
		{s.Containers, "containers", record.FieldContainers},
		{s.InitContainers, "initContainers", record.FieldInitContainers},
		{s.Volumes, "volumes", record.FieldVolumes},
	} {
		edits = append(edits, removeItems(t.spec, l.field, l.names, s, l.created)...)
	}
	// When they leave the pod spec empty, what was between its brackets
	// comes back (used only then, see flowDelete).
	edits = emptyAgain(edits, t.spec, s.EmptyText(record.EmptySpec))
	edits = append(edits, planRemoveMetadata(t, s, statusKeys)...)
	return edits
}

// removeItems deletes the named items of a list field; when the field was
// created by injection and nothing else is left in it, the field goes too,
// and a field that was empty before is emptied again, as s (under the name
// recorded) says it was written.
func removeItems(m *yaml.Node, field string, names []string, s *record.Status, recorded string) []yamltext.Edit {
	key, list := nodes.MapLookup(m, field)
	if key == nil || list.Kind != yaml.SequenceNode || len(names) == 0 {
		return nil
	}
	var doomed []*yaml.Node
	for _, name := range names {
		if item := nodes.ItemByName(list, name); item != nil {
			doomed = append(doomed, item)
		}
	}
	emptied := len(doomed) == len(list.Content)
	if s.WasCreated(recorded) && emptied {
		return []yamltext.Edit{yamltext.Delete(m, key)}
	}
	edits := make([]yamltext.Edit, 0, len(doomed)+1)
	for _, item := range doomed {
		edits = append(edits, yamltext.Delete(list, item))
	}
	if emptied {
		edits = emptyAgain(edits, list, s.EmptyText(recorded))
	}
	if s.WasNull(recorded) && emptied {
		edits = append(edits, yamltext.Nullify(m, list, s.NullToken(recorded)))
	}
	return edits
}

// emptyAgain gives the edits that delete every child of collection what
// goes back between its brackets (Status.Empty).
func emptyAgain(edits []yamltext.Edit, collection *yaml.Node, text string) []yamltext.Edit {
	for i := range edits {
		if edits[i].Kind == yamltext.DeleteEdit && edits[i].Parent == collection {
			edits[i].Text = text
		}
	}
	return edits
}

// planRemoveMetadata removes added labels and annotations, restores changed
// values, and removes maps (and metadata itself) that injection created and
// that are empty afterwards.
func planRemoveMetadata(t *podTarget, s *record.Status, statusKeys []string) []yamltext.Edit {
	var restoreLabels, restoreAnnotations map[string]string
	if s.Changed != nil {
		restoreLabels, restoreAnnotations = s.Changed.Labels, s.Changed.Annotations
	}
	annotations := append(append([]string{}, s.Annotations...), statusKeys...)
	labelEdits, labelsGone := planRemoveKeys(t.meta, "labels", s.Labels, restoreLabels, s, record.FieldLabels)
	annEdits, annGone := planRemoveKeys(t.meta, "annotations", annotations, restoreAnnotations, s, record.FieldAnnotations)
	edits := append(labelEdits, annEdits...)
	if labelsGone && annGone && onlyLabelsAndAnnotations(t.meta) {
		switch {
		case s.WasCreated(record.FieldMetadata):
			key, _ := nodes.MapLookup(t.template, "metadata")
			return []yamltext.Edit{yamltext.Delete(t.template, key)}
		case s.WasNull(record.FieldMetadata):
			edits = append(edits, yamltext.Nullify(t.template, t.meta, s.NullToken(record.FieldMetadata)))
		default:
			edits = emptyAgain(edits, t.meta, s.EmptyText(record.FieldMetadata))
		}
	}
	return edits
}

// planRemoveKeys removes keys from the labels or annotations map and
// restores changed values. gone reports that the whole map field is deleted
// (or was absent); a field that was empty before injection is emptied
// again, as s (under the name recorded) says it was written, and then it
// is not gone.
func planRemoveKeys(meta *yaml.Node, field string, remove []string, restore map[string]string, s *record.Status, recorded string) (edits []yamltext.Edit, gone bool) {
	fieldKey, m := nodes.MapLookup(meta, field)
	if fieldKey == nil {
		return nil, true
	}
	if m.Kind != yaml.MappingNode {
		return nil, false
	}
	left := len(m.Content) / 2
	for _, k := range remove {
		if key, _ := nodes.MapLookup(m, k); key != nil {
			edits = append(edits, yamltext.Delete(m, key))
			left--
		}
	}
	if s.WasCreated(recorded) && left == 0 {
		return []yamltext.Edit{yamltext.Delete(meta, fieldKey)}, true
	}
	if s.WasNull(recorded) && left == 0 {
		// Deleting the field's entries (ours) leaves it empty, as it was.
		return append(edits, yamltext.Nullify(meta, m, s.NullToken(recorded))), false
	}
	if left == 0 {
		edits = emptyAgain(edits, m, s.EmptyText(recorded))
	}
	for _, k := range slices.Sorted(maps.Keys(restore)) {
		if v := nodes.MapValue(m, k); v != nil && v.Kind == yaml.ScalarNode {
			edits = append(edits, yamltext.Set(v, restore[k]))
		}
	}
	return edits, false
}

func onlyLabelsAndAnnotations(meta *yaml.Node) bool {
	for i := 0; i < len(meta.Content); i += 2 {
		if k := meta.Content[i].Value; k != "labels" && k != "annotations" {
			return false
		}
	}
	return true
}
