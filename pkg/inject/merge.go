package inject

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// conflictError is a clash between the template and the pod.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }

// planInject computes the edits that add the template (with the object's
// override values) to a pod template that carries no injection of this
// profile. Other profiles' injections (rest, as decide read them: removing
// this profile's old injection leaves them as they were) stay as they are:
// what they own is a conflict, and fields they created are recorded as
// created here too.
func (in *Injector) planInject(t *podTarget, values map[string]string, rest others) ([]yamltext.Edit, error) {
	tpl := in.templateFor(values)
	pt := profileTarget{podTarget: t, profile: in.settings.Profile, rest: rest}
	status := &Status{Version: statusVersion, Template: in.hash, Values: values}
	containers := mapValue(t.spec, "containers")
	initContainers := mapValue(t.spec, "initContainers")
	volumes := mapValue(t.spec, "volumes")

	newContainers, err := pt.missingItems(tpl.Containers, "containers", containers, initContainers)
	if err != nil {
		return nil, err
	}
	newInits, err := pt.missingItems(tpl.InitContainers, "initContainers", containers, initContainers)
	if err != nil {
		return nil, err
	}
	newVolumes, err := pt.missingItems(tpl.Volumes, "volumes", volumes)
	if err != nil {
		return nil, err
	}
	if err := pt.checkPorts(tpl, append(append([]*yaml.Node{}, newContainers...), newInits...)); err != nil {
		return nil, err
	}
	if err := in.template.checkComputedPorts(values); err != nil {
		return nil, err
	}
	if err := pt.checkKeys(tpl); err != nil {
		return nil, err
	}
	status.Containers = namesOf(newContainers)
	status.InitContainers = namesOf(newInits)
	status.Volumes = namesOf(newVolumes)

	if len(newContainers)+len(newInits)+len(newVolumes) > 0 {
		// An empty pod spec laid out across lines ({ and } on lines of
		// their own, in indented JSON) comes back as it was on uninject.
		rest.inherit(status, emptySpec)
		status.noteEmpty(emptySpec, t.emptyText(t.spec))
	}
	var edits []yamltext.Edit
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
		if len(l.items) > 0 && !isNull(l.list) {
			rest.inherit(status, l.created)
			status.noteEmpty(l.created, t.emptyText(l.list))
		}
		more, err := appendItems(t.spec, l.field, l.list, l.items, l.front, status, l.created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", joinField(t.field, "spec"), err)
		}
		edits = append(edits, more...)
	}

	// The default-container annotation comes first, so that it sits where
	// any profile would put it, whichever profile is removed.
	annotations := tpl.Annotations
	if len(newContainers) > 0 && !hasKeyValue(tpl.Annotations, DefaultContainerAnnotation) {
		switch {
		case scalarField(mapValue(t.meta, "annotations"), DefaultContainerAnnotation) == "":
			if app := firstAppContainer(containers, rest.sidecars()); app != "" {
				annotations = append([]KeyValue{{DefaultContainerAnnotation, app}}, annotations...)
			}
		case rest.claims(DefaultContainerAnnotation):
			status.Annotations = []string{DefaultContainerAnnotation}
		}
	}
	more, err := planMetadata(t, tpl.Labels, annotations, status, rest, in.statusKey)
	return append(edits, more...), err
}

// profileTarget is a pod template seen by one profile, beside the others
// injected into it.
type profileTarget struct {
	*podTarget
	profile string
	rest    others
}

// conflict names both profiles when another profile owns what this one
// would add.
func (pt profileTarget) conflict(what, owner string) error {
	return &conflictError{ProfileConflict(what, ProfileName(owner), pt.profile)}
}

// checkKeys refuses labels and annotations another profile added or
// changed: removing either profile would take the other's value with it.
func (pt profileTarget) checkKeys(tpl *Template) error {
	for _, l := range []struct {
		field string
		kvs   []KeyValue
	}{{"labels", tpl.Labels}, {"annotations", tpl.Annotations}} {
		for _, kv := range l.kvs {
			if owner, ok := pt.rest.keyOwner(l.field, kv.Key); ok {
				return pt.conflict(fmt.Sprintf("%s %q (%s)", strings.TrimSuffix(l.field, "s"), kv.Key, joinField(pt.field, "metadata."+l.field)), owner)
			}
		}
	}
	return nil
}

func hasKeyValue(kvs []KeyValue, key string) bool {
	for _, kv := range kvs {
		if kv.Key == key {
			return true
		}
	}
	return false
}

// missingItems returns the template items (containers or volumes) the pod
// lacks; they are copied when the edits are made. An item of the same name
// that is identical counts as present; one that differs is a conflict,
// since we did not inject it. An item another profile added is a conflict
// either way.
func (pt profileTarget) missingItems(items []*yaml.Node, field string, lists ...*yaml.Node) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for _, item := range items {
		name := scalarField(item, "name")
		var existing *yaml.Node
		for _, list := range lists {
			if existing = itemByName(list, name); existing != nil {
				break
			}
		}
		if existing == nil {
			out = append(out, item)
			continue
		}
		what := "container"
		if field == "volumes" {
			what = "volume"
		}
		if owner, ok := pt.rest.owner(field, name); ok {
			return nil, pt.conflict(fmt.Sprintf("%s %q (%s)", what, name, pt.specField(field)), owner)
		}
		if sameItem(existing, item) {
			continue
		}
		if field == "volumes" {
			// Name both: the two definitions are usually close.
			return nil, atNode(existing, pt.specField(field), &conflictError{message(MessageVolumeDiffers,
				pt.specField(field), strconv.Quote(name), compactJSON(existing), compactJSON(item))})
		}
		return nil, atNode(existing, pt.specField(field), &conflictError{message(MessageContainerExists, pt.specField(field), strconv.Quote(name))})
	}
	return out, nil
}

// sameItem reports whether the pod's item holds the template's item:
// every field the template sets has the template's value, and the pod's
// item may set more. The API server defaults a Pod before admission
// (imagePullPolicy, a port's protocol, resources: {}) and stores
// quantities in canonical form ("1000m" as "1"), so this is what
// "identical" can mean for a Pod as the cluster has it; the admission
// policy decides the same way (pkg/admission, identicalExpr).
func sameItem(existing, item *yaml.Node) bool {
	return holds(nodeValue(existing), nodeValue(item), nil)
}

// quantityFields are the fields of containers and volumes whose values
// are resource quantities.
var quantityFields = map[string]bool{"resources.limits": true, "resources.requests": true, "emptyDir.sizeLimit": true}

// holds reports whether got holds want: every key of a mapping (an empty
// mapping: the key is set), a list of words whole, another list item for
// item with the same length, a scalar equal (a quantity as a quantity).
// path is the field path from the item.
func holds(got, want any, path []string) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, set := g[k]
			if !set || gv == nil {
				return false
			}
			if !holds(gv, wv, append(append([]string(nil), path...), k)) {
				return false
			}
		}
		return true
	case []any:
		g, _ := got.([]any)
		if got != nil && g == nil {
			return false
		}
		if words(w) {
			return len(g) == len(w) && sameValue(g, w)
		}
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if _, empty := w[i].(map[string]any); empty && len(w[i].(map[string]any)) == 0 {
				continue // an empty mapping in a list holds whatever the item is
			}
			if !holds(g[i], w[i], path) {
				return false
			}
		}
		return true
	}
	if got == nil {
		return false
	}
	if isQuantityField(path) {
		gs, ws := fmt.Sprint(got), fmt.Sprint(want)
		return gs == ws || sameQuantity(gs, ws)
	}
	return sameValue(got, want)
}

// words reports whether a list holds only strings (args, command): such a
// list is compared whole.
func words(l []any) bool {
	for _, v := range l {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

func sameValue(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func isQuantityField(path []string) bool {
	return len(path) > 0 && (quantityFields[strings.Join(path[:len(path)-1], ".")] || quantityFields[strings.Join(path, ".")])
}

func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// firstAppContainer returns the first container that no profile added.
func firstAppContainer(containers *yaml.Node, sidecars map[string]bool) string {
	for _, name := range itemNames(containers) {
		if name != "" && !sidecars[name] {
			return name
		}
	}
	return ""
}

// appendItems adds items to the list field of spec: at the end, or at the
// front (native sidecars start before the app's own init containers). A
// missing or empty field is set and recorded in status.
func appendItems(spec *yaml.Node, field string, list *yaml.Node, items []*yaml.Node, front bool, status *Status, created string) ([]yamltext.Edit, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if isNull(list) {
		status.addField(created, presentValue(spec, field))
		e := placeField(spec, field, newSequence(copyAll(items)...), beforeKeyFor(spec, field))
		e.Origin, e.OriginN = items[0], len(items)
		return []yamltext.Edit{e}, nil
	}
	if list.Kind == yaml.AliasNode {
		return nil, atNode(list, field, &conflictError{fmt.Sprintf("%s: is an alias (*%s); refusing to edit the shared anchor", field, list.Value)})
	}
	if list.Kind != yaml.SequenceNode {
		return nil, atNode(list, field, fmt.Errorf("%s: must be a list", field))
	}
	var before *yaml.Node
	if front && len(list.Content) > 0 {
		before = list.Content[0]
	}
	edits := make([]yamltext.Edit, 0, len(items))
	for _, item := range items {
		e := yamltext.Insert(list, before, "", deepCopy(item))
		e.Origin, e.OriginN = item, 1
		edits = append(edits, e)
	}
	return edits, nil
}

// beforeKeyFor keeps the usual field order when a field is created:
// initContainers, containers, volumes; metadata before spec; labels before
// annotations. A created field goes before the first of the fields that
// follow it, so that fields several profiles create stand in the same
// order whichever profile created which: removing one profile then leaves
// what the others would have written alone.
func beforeKeyFor(m *yaml.Node, field string) *yaml.Node {
	for _, next := range fieldsAfter[field] {
		if key, _ := mapLookup(m, next); key != nil {
			return key
		}
	}
	return nil
}

// fieldsAfter lists, for each field injection may create, the fields that
// come after it.
var fieldsAfter = map[string][]string{
	"initContainers": {"containers", "volumes"},
	"containers":     {"volumes"},
	"metadata":       {"spec"},
	"labels":         {"annotations"},
}

// placeField sets field of mapping m to value: a new field before the key
// before, or the value of a field that is present but empty ("volumes:").
func placeField(m *yaml.Node, field string, value, before *yaml.Node) yamltext.Edit {
	if _, old := mapLookup(m, field); old != nil {
		return yamltext.Fill(m, old, value)
	}
	return yamltext.Insert(m, before, field, value)
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
func planMetadata(t *podTarget, labels, annotations []KeyValue, status *Status, rest others, statusKey string) ([]yamltext.Edit, error) {
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
		ann.Content = append(ann.Content, newString(statusKey), newString(status.Encode()))
		return []yamltext.Edit{placeField(t.template, "metadata", meta, beforeKeyFor(t.template, "metadata"))}, nil
	}
	rest.inherit(status, createdMetadata)
	status.noteEmpty(createdMetadata, t.emptyText(t.meta)) // empty: annotations go in
	edits, err := planStringMap(t, "labels", labels, &status.Labels, status, createdLabels, rest, "")
	if err != nil {
		return nil, err
	}
	more, err := planStringMap(t, "annotations", annotations, &status.Annotations, status, createdAnnotations, rest, statusKey)
	return append(edits, more...), err
}

// planStringMap adds or overwrites entries of the labels or annotations
// map. When statusKey is set, the status record is added last; it is
// encoded only after every other part of status is known.
func planStringMap(t *podTarget, field string, kvs []KeyValue, added *[]string, status *Status, created string, rest others, statusKey string) ([]yamltext.Edit, error) {
	if len(kvs) == 0 && statusKey == "" {
		return nil, nil
	}
	m := mapValue(t.meta, field)
	if isNull(m) {
		status.addField(created, presentValue(t.meta, field))
		*added = keys(kvs)
		fresh := kvMapping(kvs)
		if statusKey != "" {
			fresh.Content = append(fresh.Content, newString(statusKey), newString(status.Encode()))
		}
		return []yamltext.Edit{placeField(t.meta, field, fresh, beforeKeyFor(t.meta, field))}, nil
	}
	if m.Kind == yaml.AliasNode {
		// Adding to an alias would change the anchor and every other use of
		// it, such as a selector.
		return nil, atNode(m, joinField(t.field, "metadata."+field), &conflictError{fmt.Sprintf("%s: is an alias (*%s); refusing to edit the shared anchor", joinField(t.field, "metadata."+field), m.Value)})
	}
	if m.Kind != yaml.MappingNode {
		return nil, atNode(m, joinField(t.field, "metadata."+field), fmt.Errorf("%s: must be a mapping", joinField(t.field, "metadata."+field)))
	}
	rest.inherit(status, created)
	if len(kvs) > 0 || statusKey != "" {
		status.noteEmpty(created, t.emptyText(m))
	}
	var edits []yamltext.Edit
	for _, kv := range kvs {
		existing := mapValue(m, kv.Key)
		switch {
		case existing == nil:
			*added = append(*added, kv.Key)
			edits = append(edits, yamltext.Insert(m, nil, kv.Key, newString(kv.Value)))
		case existing.Value != kv.Value || existing.Kind != yaml.ScalarNode:
			recordChanged(status, field, kv.Key, existing.Value)
			edits = append(edits, yamltext.Set(existing, kv.Value))
		}
	}
	if statusKey != "" {
		edits = append(edits, yamltext.Insert(m, nil, statusKey, newString(status.Encode())))
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
