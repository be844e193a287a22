package inject

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// annotationDomain is the domain of every annotation the injector reads or
// writes. The default profile uses it as is; a profile named NAME uses
// NAME.sidecar.kinject.dev, so every profile has its own status record,
// opt-in/out switch and override annotations.
const annotationDomain = "sidecar.kinject.dev"

// Annotation names relative to a profile's domain.
const (
	statusName  = "status"
	injectName  = "inject"
	skippedName = "skipped"
)

// ValidateProfile checks a profile name: "" is the default profile; any
// other name is a DNS label, so that NAME.sidecar.kinject.dev is a valid
// annotation prefix. "default" is refused: the default profile has no
// name, and a profile called so would be a second one that messages
// could not tell from it.
func ValidateProfile(name string) error {
	if name == "" {
		return nil
	}
	if name == "default" {
		return fmt.Errorf(`profile "default": the default profile has no name; leave the profile out to use it (a named profile is another sidecar of its own)`)
	}
	if !isDNSLabel(name) || len(name)+len(annotationDomain)+1 > 253 {
		return fmt.Errorf("profile %q: not a valid name (lower-case letters, digits and '-', at most 63)", name)
	}
	return nil
}

// ProfileDomain returns the annotation prefix of a profile:
// sidecar.kinject.dev for the default profile, NAME.sidecar.kinject.dev
// for a named one.
func ProfileDomain(profile string) string {
	if profile == "" {
		return annotationDomain
	}
	return profile + "." + annotationDomain
}

// ProfileAnnotation returns the full annotation key of name for a profile:
// a bare name ("cpu-request") is put under the profile's domain; a name
// that has a prefix ("example.com/cpu") is used as it is.
func ProfileAnnotation(profile, name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return ProfileDomain(profile) + "/" + name
}

// StatusAnnotationFor returns the status record's annotation of a profile
// (StatusAnnotation for the default profile).
func StatusAnnotationFor(profile string) string { return ProfileAnnotation(profile, statusName) }

// SkippedAnnotationFor returns the annotation in which the admission
// policy of a profile writes why it left a Pod without its sidecar: the
// reason code of kubectl inject's reports (opted_out, host_network,
// other_mesh, conflict, invalid_object, invalid_status).
func SkippedAnnotationFor(profile string) string { return ProfileAnnotation(profile, skippedName) }

// InjectAnnotationFor returns the opt-in/out annotation of a profile
// (InjectAnnotation for the default profile).
func InjectAnnotationFor(profile string) string { return ProfileAnnotation(profile, injectName) }

// ProfileOfStatusKey reports whether key is some profile's status
// annotation, and which profile.
func ProfileOfStatusKey(key string) (profile string, ok bool) {
	if key == StatusAnnotation {
		return "", true
	}
	prefix, found := strings.CutSuffix(key, "."+annotationDomain+"/"+statusName)
	if !found || ValidateProfile(prefix) != nil || prefix == "" {
		return "", false
	}
	return prefix, true
}

// ProfileName names a profile in messages: "the default profile" or
// `profile "NAME"`.
func ProfileName(profile string) string {
	if profile == "" {
		return `the default profile`
	}
	return fmt.Sprintf("profile %q", profile)
}

// ProfileConflict is the message when another profile (ownerName, as
// ProfileName gives it) already added what profile would add. what names
// the thing, its kind first: `container "envoy" (spec.containers)`.
func ProfileConflict(what, ownerName, profile string) string {
	kind, _, _ := strings.Cut(what, " ")
	return message(MessageProfileConflict, what, ownerName, ProfileName(profile), kind)
}

// record is one profile's status record found on a pod template.
type record struct {
	profile string
	key     string // the annotation holding it
	status  *Status
}

// readRecords returns every profile's status record on the pod template,
// in the order of the annotations. A record that does not parse is an
// error: what it owns cannot be known.
func readRecords(t *podTarget) ([]record, error) {
	ann := mapValue(t.meta, "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil, nil
	}
	var out []record
	for i := 0; i+1 < len(ann.Content); i += 2 {
		key := ann.Content[i].Value
		profile, ok := ProfileOfStatusKey(key)
		if !ok {
			continue
		}
		s, err := ParseStatusAt(key, ann.Content[i+1].Value)
		if err != nil {
			return nil, err
		}
		out = append(out, record{profile: profile, key: key, status: s})
	}
	return out, nil
}

// others are the records of the profiles besides the one being processed:
// what they own cannot be taken, and fields they created are created for
// every profile that adds to them.
type others []record

// without returns the records other than profile's.
func (rs others) without(profile string) others {
	var out others
	for _, r := range rs {
		if r.profile != profile {
			out = append(out, r)
		}
	}
	return out
}

// owner returns the profile whose record lists name in the list field
// ("containers", "initContainers", "volumes").
func (rs others) owner(field, name string) (string, bool) {
	for _, r := range rs {
		var names []string
		switch field {
		case "containers", "initContainers":
			// One name space: a container of one profile clashes with a
			// native sidecar of another.
			names = append(append(names, r.status.Containers...), r.status.InitContainers...)
		case "volumes":
			names = r.status.Volumes
		}
		for _, n := range names {
			if n == name {
				return r.profile, true
			}
		}
	}
	return "", false
}

// keyOwner returns the profile that added or changed the label or
// annotation key.
func (rs others) keyOwner(field, key string) (string, bool) {
	for _, r := range rs {
		s := r.status
		list, changed := s.Labels, map[string]string(nil)
		if field == "annotations" {
			list = s.Annotations
		}
		if s.Changed != nil {
			changed = s.Changed.Labels
			if field == "annotations" {
				changed = s.Changed.Annotations
			}
		}
		if _, ok := changed[key]; ok {
			return r.profile, true
		}
		for _, k := range list {
			if k == key {
				return r.profile, true
			}
		}
	}
	return "", false
}

// claims reports whether another profile lists the annotation key as added:
// the default-container annotation is shared by every profile that adds
// containers, and stays until the last of them is removed.
func (rs others) claims(key string) bool {
	_, ok := rs.keyOwner("annotations", key)
	return ok
}

// sidecars returns the names of every container the records list.
func (rs others) sidecars() map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		for _, n := range r.status.Containers {
			out[n] = true
		}
		for _, n := range r.status.InitContainers {
			out[n] = true
		}
	}
	return out
}

// inherit records field as created (or filled, or laid out in place of
// the blank space it held when empty) in s when another profile recorded
// it so: the field would not be so without the profiles, so each one
// that adds to it records that, and the last one removed takes it away.
// This keeps every profile's record the same whatever the order of
// injection.
func (rs others) inherit(s *Status, field string) {
	for _, r := range rs {
		switch {
		case r.status.emptyText(field) != "":
			s.noteEmpty(field, r.status.emptyText(field))
			return
		case r.status.created(field):
			s.addField(field, nil)
			return
		case r.status.wasNull(field):
			s.addField(field, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: r.status.nullToken(field)})
			return
		}
	}
}
