package inject

import (
	"fmt"
	"slices"

	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// ConflictKind is a kind of thing the template adds that the pod, or
// another profile, may hold already: how messages name it, and the lists
// of a status record that say which profile added one. The core checks
// each kind in Go and the admission policy in CEL, both from this table.
type ConflictKind struct {
	// Name is the word messages use: "container".
	Name string
	// Added are the record's lists that name what a profile added of this
	// kind (StatusGrammar); containers and init containers share one name
	// space.
	Added []string
	// Changed is the field of the record's "changed" that holds the values
	// a profile overwrote ("labels"), "" for a kind that is never changed.
	Changed string
}

// The kinds of conflicts.
var (
	ConflictContainer  = ConflictKind{Name: "container", Added: []string{record.KeyContainers, record.KeyInitContainers}}
	ConflictVolume     = ConflictKind{Name: "volume", Added: []string{record.KeyVolumes}}
	ConflictLabel      = ConflictKind{Name: "label", Added: []string{record.KeyLabels}, Changed: record.KeyLabels}
	ConflictAnnotation = ConflictKind{Name: "annotation", Added: []string{record.KeyAnnotations}, Changed: record.KeyAnnotations}
	// ConflictPort is a port two sidecars declare; records do not list
	// ports: the owner is the profile that added the app's sidecar.
	ConflictPort = ConflictKind{Name: "port"}
)

// ItemConflictKind is the kind of the items of a pod spec list:
// "containers", "initContainers" or "volumes".
func ItemConflictKind(list string) ConflictKind {
	if list == "volumes" {
		return ConflictVolume
	}
	return ConflictContainer
}

// MetadataConflictKinds are the kinds of keys a template adds to the pod
// template's metadata, in the order they are checked.
func MetadataConflictKinds() []ConflictKind {
	return []ConflictKind{ConflictLabel, ConflictAnnotation}
}

// MetadataField is the pod template's metadata field holding keys of the
// kind: "labels", "annotations".
func (k ConflictKind) MetadataField() string { return k.Name + "s" }

// Subject names one thing of the kind in a message, kind first, as
// ProfileConflict wants it: container "envoy" (spec.containers).
func (k ConflictKind) Subject(name, field string) string {
	return fmt.Sprintf("%s %q (%s)", k.Name, name, field)
}

// TemplateKeys are the template's labels or annotations, by kind.
func (k ConflictKind) TemplateKeys(t *template.Template) []template.KeyValue {
	if k.Name == ConflictAnnotation.Name {
		return t.Annotations
	}
	return t.Labels
}

// addedBy reports whether the record s lists name as added of the kind, or
// holds a value of it that it changed.
func addedBy(s *record.Status, k ConflictKind, name string) bool {
	for _, list := range k.Added {
		if slices.Contains(s.List(list), name) {
			return true
		}
	}
	_, changed := s.ChangedOf(k.Changed)[name]
	return changed
}
