package inject

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// conflictError is a clash between the template and the pod.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }

// planInject computes the edits that add the template to a pod template
// that carries no injection.
func (in *Injector) planInject(t *podTarget) ([]edit, error) {
	tpl := in.template
	status := &Status{Version: statusVersion, Template: in.hash}
	containers := mapValue(t.spec, "containers")
	initContainers := mapValue(t.spec, "initContainers")
	volumes := mapValue(t.spec, "volumes")

	newContainers, err := in.missingItems(t, tpl.Containers, "containers", containers, initContainers)
	if err != nil {
		return nil, err
	}
	newInits, err := in.missingItems(t, tpl.InitContainers, "initContainers", containers, initContainers)
	if err != nil {
		return nil, err
	}
	newVolumes, err := in.missingItems(t, tpl.Volumes, "volumes", volumes)
	if err != nil {
		return nil, err
	}
	if err := checkPorts(t, append(append([]*yaml.Node{}, newContainers...), newInits...)); err != nil {
		return nil, err
	}
	status.Containers = namesOf(newContainers)
	status.InitContainers = namesOf(newInits)
	status.Volumes = namesOf(newVolumes)

	var edits []edit
	for _, l := range []struct {
		field   string
		list    *yaml.Node
		items   []*yaml.Node
		front   bool
		created string
	}{
		{"containers", containers, newContainers, false, createdContainers},
		{"initContainers", initContainers, newInits, true, createdInitContainers},
		{"volumes", volumes, newVolumes, false, createdVolumes},
	} {
		more, err := appendItems(t.spec, l.field, l.list, l.items, l.front, status, l.created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", joinField(t.field, "spec"), err)
		}
		edits = append(edits, more...)
	}

	annotations := tpl.Annotations
	if len(newContainers) > 0 && scalarField(mapValue(t.meta, "annotations"), DefaultContainerAnnotation) == "" {
		if app := firstAppContainer(containers); app != "" {
			annotations = append(append([]KeyValue{}, annotations...), KeyValue{DefaultContainerAnnotation, app})
		}
	}
	more, err := planMetadata(t, tpl.Labels, annotations, status)
	return append(edits, more...), err
}

// missingItems returns the template items (containers or volumes) the pod
// lacks; they are copied when the edits are made. An item of the same name that is identical counts as
// present; one that differs is a conflict, since we did not inject it.
func (in *Injector) missingItems(t *podTarget, items []*yaml.Node, field string, lists ...*yaml.Node) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for _, item := range items {
		name := scalarField(item, "name")
		var existing *yaml.Node
		for _, list := range lists {
			if existing = itemByName(list, name); existing != nil {
				break
			}
		}
		switch {
		case existing == nil:
			out = append(out, item)
		case !sameNode(existing, item):
			if field == "volumes" {
				// Name both: the two definitions are usually close.
				return nil, &conflictError{fmt.Sprintf("%s: volume %q already exists and differs from the template's: the pod's is %s, the template's is %s (rename one, or make them equal so the pod's is used)",
					t.specField(field), name, compactJSON(existing), compactJSON(item))}
			}
			return nil, &conflictError{fmt.Sprintf("%s: container %q already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)", t.specField(field), name)}
		}
	}
	return out, nil
}

// checkPorts refuses sidecar ports that an app container already uses: both
// would bind the same port in the pod's shared network namespace.
func checkPorts(t *podTarget, sidecars []*yaml.Node) error {
	used := map[string]string{}
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range seqItems(mapValue(t.spec, list)) {
			for _, p := range seqItems(mapValue(c, "ports")) {
				used[portKey(p)] = scalarField(c, "name")
			}
		}
	}
	for _, s := range sidecars {
		for _, p := range seqItems(mapValue(s, "ports")) {
			if app, clash := used[portKey(p)]; clash {
				return &conflictError{fmt.Sprintf("%s: sidecar %q port %s is already used by container %q", t.specField("containers"), scalarField(s, "name"), scalarField(p, "containerPort"), app)}
			}
		}
	}
	return nil
}

func portKey(p *yaml.Node) string {
	proto := scalarField(p, "protocol")
	if proto == "" {
		proto = "TCP"
	}
	return scalarField(p, "containerPort") + "/" + proto
}

func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func firstAppContainer(containers *yaml.Node) string {
	for _, name := range itemNames(containers) {
		if name != "" {
			return name
		}
	}
	return ""
}

// appendItems adds items to the list field of spec: at the end, or at the
// front (native sidecars start before the app's own init containers). A
// missing or empty field is set and recorded in status.
func appendItems(spec *yaml.Node, field string, list *yaml.Node, items []*yaml.Node, front bool, status *Status, created string) ([]edit, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if isNull(list) {
		status.addField(created, presentValue(spec, field))
		e := placeField(spec, field, newSequence(copyAll(items)...), beforeKeyFor(spec, field))
		e.origin, e.originN = items[0], len(items)
		return []edit{e}, nil
	}
	if list.Kind == yaml.AliasNode {
		return nil, &conflictError{fmt.Sprintf("%s: is an alias (*%s); refusing to edit the shared anchor", field, list.Value)}
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list", field)
	}
	var before *yaml.Node
	if front && len(list.Content) > 0 {
		before = list.Content[0]
	}
	edits := make([]edit, 0, len(items))
	for _, item := range items {
		e := insertAt(list, before, "", deepCopy(item))
		e.origin, e.originN = item, 1
		edits = append(edits, e)
	}
	return edits, nil
}

// beforeKeyFor keeps the usual field order when a field is created:
// initContainers before containers, metadata before spec.
func beforeKeyFor(m *yaml.Node, field string) *yaml.Node {
	next := map[string]string{"initContainers": "containers", "metadata": "spec"}[field]
	if next == "" {
		return nil
	}
	key, _ := mapLookup(m, next)
	return key
}

// placeField sets field of mapping m to value: a new field before the key
// before, or the value of a field that is present but empty ("volumes:").
func placeField(m *yaml.Node, field string, value, before *yaml.Node) edit {
	if _, old := mapLookup(m, field); old != nil {
		return fill(m, old, value)
	}
	return insertAt(m, before, field, value)
}

func copyAll(nodes []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, len(nodes))
	for i, n := range nodes {
		out[i] = deepCopy(n)
	}
	return out
}

func hasKey(m *yaml.Node, field string) bool {
	key, _ := mapLookup(m, field)
	return key != nil
}

// presentValue returns the value of field when m has the key (an empty
// value, here), nil when it has not.
func presentValue(m *yaml.Node, field string) *yaml.Node {
	key, value := mapLookup(m, field)
	if key == nil {
		return nil
	}
	return value
}

// planMetadata adds labels and annotations (the status record last) to the
// pod template's metadata, creating maps as needed.
func planMetadata(t *podTarget, labels, annotations []KeyValue, status *Status) ([]edit, error) {
	if t.meta == nil {
		meta := newMapping()
		if len(labels) > 0 {
			status.addField(createdLabels, nil)
			meta.Content = append(meta.Content, newString("labels"), kvMapping(labels))
			status.Labels = keys(labels)
		}
		status.addField(createdAnnotations, nil)
		status.addField(createdMetadata, presentValue(t.template, "metadata"))
		status.Annotations = keys(annotations)
		ann := kvMapping(annotations)
		meta.Content = append(meta.Content, newString("annotations"), ann)
		ann.Content = append(ann.Content, newString(StatusAnnotation), newString(status.Encode()))
		return []edit{placeField(t.template, "metadata", meta, beforeKeyFor(t.template, "metadata"))}, nil
	}
	edits, err := planStringMap(t, "labels", labels, &status.Labels, status, createdLabels, nil)
	if err != nil {
		return nil, err
	}
	more, err := planStringMap(t, "annotations", annotations, &status.Annotations, status, createdAnnotations, status)
	return append(edits, more...), err
}

// planStringMap adds or overwrites entries of the labels or annotations
// map. When withStatus is set, the status record is added last; it is
// encoded only after every other part of status is known.
func planStringMap(t *podTarget, field string, kvs []KeyValue, added *[]string, status *Status, created string, withStatus *Status) ([]edit, error) {
	if len(kvs) == 0 && withStatus == nil {
		return nil, nil
	}
	m := mapValue(t.meta, field)
	if isNull(m) {
		status.addField(created, presentValue(t.meta, field))
		*added = keys(kvs)
		fresh := kvMapping(kvs)
		if withStatus != nil {
			fresh.Content = append(fresh.Content, newString(StatusAnnotation), newString(withStatus.Encode()))
		}
		return []edit{placeField(t.meta, field, fresh, nil)}, nil
	}
	if m.Kind == yaml.AliasNode {
		// Adding to an alias would change the anchor and every other use of
		// it, such as a selector.
		return nil, &conflictError{fmt.Sprintf("%s: is an alias (*%s); refusing to edit the shared anchor", joinField(t.field, "metadata."+field), m.Value)}
	}
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping", joinField(t.field, "metadata."+field))
	}
	var edits []edit
	for _, kv := range kvs {
		existing := mapValue(m, kv.Key)
		switch {
		case existing == nil:
			*added = append(*added, kv.Key)
			edits = append(edits, insertAt(m, nil, kv.Key, newString(kv.Value)))
		case existing.Value != kv.Value || existing.Kind != yaml.ScalarNode:
			recordChanged(status, field, kv.Key, existing.Value)
			edits = append(edits, setScalar(existing, kv.Value))
		}
	}
	if withStatus != nil {
		edits = append(edits, insertAt(m, nil, StatusAnnotation, newString(withStatus.Encode())))
	}
	return edits, nil
}

func recordChanged(status *Status, field, key, old string) {
	if status.Changed == nil {
		status.Changed = &Changed{}
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

func kvMapping(kvs []KeyValue) *yaml.Node {
	m := newMapping()
	for _, kv := range kvs {
		m.Content = append(m.Content, newString(kv.Key), newString(kv.Value))
	}
	return m
}

func keys(kvs []KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

// compactJSON renders a node as compact JSON for messages.
func compactJSON(n *yaml.Node) string {
	b, err := json.Marshal(nodeValue(n))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}
