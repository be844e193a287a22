package inject

import (
	"fmt"
	"slices"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// planInject computes the edits that add the template (with the object's
// override values) to a pod template that carries no injection of this
// profile. Other profiles' injections (rest, as decide read them: removing
// this profile's old injection leaves them as they were) stay as they are:
// what they own is a conflict, and fields they created are recorded as
// created here too.
func (in *Injector) planInject(t *podTarget, values map[string]string, rest others) ([]yamltext.Edit, error) {
	tpl := in.templateFor(values)
	pt := profileTarget{podTarget: t, profile: in.settings.Profile, rest: rest}
	status := &record.Status{Version: record.Version, Template: in.hash, Values: values}
	containers := nodes.MapValue(t.spec, "containers")
	initContainers := nodes.MapValue(t.spec, "initContainers")
	volumes := nodes.MapValue(t.spec, "volumes")

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
	if err := checkComputedPorts(in.template, values); err != nil {
		return nil, err
	}
	if err := pt.checkKeys(tpl); err != nil {
		return nil, err
	}
	status.Containers = nodes.NamesOf(newContainers)
	status.InitContainers = nodes.NamesOf(newInits)
	status.Volumes = nodes.NamesOf(newVolumes)

	if len(newContainers)+len(newInits)+len(newVolumes) > 0 {
		// An empty pod spec laid out across lines ({ and } on lines of
		// their own, in indented JSON) comes back as it was on uninject.
		rest.inherit(status, record.EmptySpec)
		status.NoteEmpty(record.EmptySpec, t.emptyText(t.spec))
	}
	var edits []yamltext.Edit
	for _, l := range []struct {
		field   string
		list    *yaml.Node
		items   []*yaml.Node
		front   bool
		created string
	}{
		{"containers", containers, newContainers, false, record.FieldContainers},
		{"initContainers", initContainers, newInits, true, record.FieldInitContainers},
		{"volumes", volumes, newVolumes, false, record.FieldVolumes},
	} {
		if len(l.items) > 0 && !nodes.IsNull(l.list) {
			rest.inherit(status, l.created)
			status.NoteEmpty(l.created, t.emptyText(l.list))
		}
		more, err := appendItems(t.spec, l.field, l.list, l.items, l.front, rest.sidecars(), status, l.created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nodes.JoinField(t.field, "spec"), err)
		}
		edits = append(edits, more...)
	}

	// The default-container annotation comes first, so that it sits where
	// any profile would put it, whichever profile is removed.
	annotations := tpl.Annotations
	if len(newContainers) > 0 && !hasKeyValue(tpl.Annotations, naming.DefaultContainerAnnotation) {
		switch {
		case nodes.ScalarField(nodes.MapValue(t.meta, "annotations"), naming.DefaultContainerAnnotation) == "":
			if app := firstAppContainer(containers, rest.sidecars()); app != "" {
				annotations = append([]template.KeyValue{{Key: naming.DefaultContainerAnnotation, Value: app}}, annotations...)
			}
		case rest.claims(naming.DefaultContainerAnnotation):
			status.Annotations = []string{naming.DefaultContainerAnnotation}
		}
	}
	more, err := planMetadata(t, tpl.Labels, annotations, status, rest, in.statusKey)
	return append(edits, more...), err
}

// firstAppContainer returns the first container that no profile added.
func firstAppContainer(containers *yaml.Node, sidecars map[string]bool) string {
	for _, name := range nodes.ItemNames(containers) {
		if name != "" && !sidecars[name] {
			return name
		}
	}
	return ""
}

// appendItems adds items to the list field of spec: at the end, or at the
// front (native sidecars start before the app's own init containers). A
// missing or empty field is set and recorded in status.
func appendItems(spec *yaml.Node, field string, list *yaml.Node, items []*yaml.Node, front bool, sidecars map[string]bool, status *record.Status, created string) ([]yamltext.Edit, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if nodes.IsNull(list) {
		status.AddField(created, presentValue(spec, field))
		// The template's own items: an edit naming its Origin is copied
		// only when applied to the tree (yamltext.Edit).
		e := placeField(spec, field, nodes.NewSequence(slices.Clone(items)...), beforeKeyFor(spec, field))
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
	if front {
		// One name per item: list is a sequence.
		names := nodes.ItemNames(list)
		for i, n := range list.Content {
			if sidecars[names[i]] {
				continue
			}
			before = n
			break
		}
	}
	edits := make([]yamltext.Edit, 0, len(items))
	for _, item := range items {
		e := yamltext.Insert(list, before, "", item)
		e.Origin, e.OriginN = item, 1
		edits = append(edits, e)
	}
	return edits, nil
}
