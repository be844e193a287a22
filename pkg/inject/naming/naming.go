package naming

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
)

// This file names what the injector writes and reads on objects: the
// annotations of each profile, the namespace label, and profile names in
// messages.

// Annotations that steer injection.
const (
	// InjectAnnotation opts an object in ("true") or out ("false").
	InjectAnnotation = "sidecar.kinject.dev/inject"
	// SeedAnnotation is the seed Initializer's opt-in annotation.
	SeedAnnotation = "initializer.kubernetes.io/envoy"
	// DefaultContainerAnnotation tells kubectl exec/logs which container to use.
	DefaultContainerAnnotation = "kubectl.kubernetes.io/default-container"
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

// IsOwnName reports whether a bare annotation name is one a profile keeps
// for itself under its domain (its record, its switch, its skip reason),
// so that a template's parameter cannot take it.
func IsOwnName(name string) bool {
	return name == statusName || name == injectName || name == skippedName
}

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
	if !grammar.IsDNSLabel(name) || len(name)+len(annotationDomain)+1 > 253 {
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

// StatusAnnotation records on the pod template exactly what the default
// profile injected (a record.Status); StatusAnnotationFor names a profile's.
const StatusAnnotation = "sidecar.kinject.dev/status"

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

// NamespaceEnabled is the value of a namespace's injection label
// (NamespaceLabelFor) that turns admission injection on for its Pods.
const NamespaceEnabled = "enabled"

// NamespaceLabelFor returns the namespace label that opts a namespace in
// to admission injection for a profile: sidecar.kinject.dev/inject for the
// default profile, NAME.sidecar.kinject.dev/inject for profile NAME (the
// key of the Pod's opt-in/out annotation, as a label of the namespace).
func NamespaceLabelFor(profile string) string { return InjectAnnotationFor(profile) }
