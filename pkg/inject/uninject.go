package inject

import (
	"sort"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readStatus returns the pod template's status record, nil when it has none.
func readStatus(t *podTarget) (*Status, *yaml.Node, error) {
	ann := mapValue(t.meta, "annotations")
	key, value := mapLookup(ann, StatusAnnotation)
	if key == nil {
		return nil, nil, nil
	}
	s, err := ParseStatus(value.Value)
	if err != nil {
		return nil, nil, err
	}
	return s, key, nil
}

// statusIntact reports whether everything the record lists is still there.
// A record whose parts were removed by hand is stale even when its template
// hash is current.
func statusIntact(t *podTarget, s *Status) bool {
	for _, l := range []struct {
		names []string
		field string
	}{{s.Containers, "containers"}, {s.InitContainers, "initContainers"}, {s.Volumes, "volumes"}} {
		list := mapValue(t.spec, l.field)
		for _, name := range l.names {
			if itemByName(list, name) == nil {
				return false
			}
		}
	}
	return true
}

// planUninject computes the edits that remove exactly what s records:
// the items and keys added, the values changed, the fields created.
func planUninject(t *podTarget, s *Status) []edit {
	var edits []edit
	for _, l := range []struct {
		names   []string
		field   string
		created string
	}{
		{s.Containers, "containers", createdContainers},
		{s.InitContainers, "initContainers", createdInitContainers},
		{s.Volumes, "volumes", createdVolumes},
	} {
		edits = append(edits, removeItems(t.spec, l.field, l.names, s.created(l.created), s.wasNull(l.created), s.nullToken(l.created))...)
	}
	edits = append(edits, planRemoveMetadata(t, s)...)
	return edits
}

// removeItems deletes the named items of a list field; when the field was
// created by injection and nothing else is left in it, the field goes too,
// and a field that was empty before is emptied again.
func removeItems(m *yaml.Node, field string, names []string, created, wasNull bool, token string) []edit {
	key, list := mapLookup(m, field)
	if key == nil || list.Kind != yaml.SequenceNode || len(names) == 0 {
		return nil
	}
	var doomed []*yaml.Node
	for _, name := range names {
		if item := itemByName(list, name); item != nil {
			doomed = append(doomed, item)
		}
	}
	if created && len(doomed) == len(list.Content) {
		return []edit{deleteChild(m, key)}
	}
	edits := make([]edit, 0, len(doomed)+1)
	for _, item := range doomed {
		edits = append(edits, deleteChild(list, item))
	}
	if wasNull && len(doomed) == len(list.Content) {
		edits = append(edits, nullify(m, list, token))
	}
	return edits
}

// planRemoveMetadata removes added labels and annotations, restores changed
// values, and removes maps (and metadata itself) that injection created and
// that are empty afterwards.
func planRemoveMetadata(t *podTarget, s *Status) []edit {
	var restoreLabels, restoreAnnotations map[string]string
	if s.Changed != nil {
		restoreLabels, restoreAnnotations = s.Changed.Labels, s.Changed.Annotations
	}
	annotations := append(append([]string{}, s.Annotations...), StatusAnnotation)
	labelEdits, labelsGone := planRemoveKeys(t.meta, "labels", s.Labels, restoreLabels, s.created(createdLabels), s.wasNull(createdLabels), s.nullToken(createdLabels))
	annEdits, annGone := planRemoveKeys(t.meta, "annotations", annotations, restoreAnnotations, s.created(createdAnnotations), s.wasNull(createdAnnotations), s.nullToken(createdAnnotations))
	edits := append(labelEdits, annEdits...)
	if labelsGone && annGone && onlyLabelsAndAnnotations(t.meta) {
		switch {
		case s.created(createdMetadata):
			key, _ := mapLookup(t.template, "metadata")
			return []edit{deleteChild(t.template, key)}
		case s.wasNull(createdMetadata):
			edits = append(edits, nullify(t.template, t.meta, s.nullToken(createdMetadata)))
		}
	}
	return edits
}

// planRemoveKeys removes keys from the labels or annotations map and
// restores changed values. gone reports that the whole map field is deleted
// (or was absent); a field that was empty before injection is emptied
// again, and then it is not gone.
func planRemoveKeys(meta *yaml.Node, field string, remove []string, restore map[string]string, created, wasNull bool, token string) (edits []edit, gone bool) {
	fieldKey, m := mapLookup(meta, field)
	if fieldKey == nil {
		return nil, true
	}
	if m.Kind != yaml.MappingNode {
		return nil, false
	}
	left := len(m.Content) / 2
	for _, k := range remove {
		if key, _ := mapLookup(m, k); key != nil {
			edits = append(edits, deleteChild(m, key))
			left--
		}
	}
	if created && left == 0 {
		return []edit{deleteChild(meta, fieldKey)}, true
	}
	if wasNull && left == 0 {
		// Deleting the field's entries (ours) leaves it empty, as it was.
		return append(edits, nullify(meta, m, token)), false
	}
	for _, k := range sortedKeys(restore) {
		if v := mapValue(m, k); v != nil && v.Kind == yaml.ScalarNode {
			edits = append(edits, setScalar(v, restore[k]))
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

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
