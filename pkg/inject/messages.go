package inject

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// Formats of the conflict messages that the admission policy writes too
// (pkg/admission builds its CEL from them): every verb is %s, its argument
// already quoted where the message quotes it (strconv.Quote, as %q).
const (
	// MessageProfileConflict: what (kind first), the other profile and
	// this one (ProfileName), the kind.
	MessageProfileConflict = "%s is added by %s and by %s: two profiles cannot add the same %s (change one of the templates)"
	// MessageContainerExists: field, the container's name.
	MessageContainerExists = "%s: container %s already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)"
	// MessageVolumeDiffers: field, the volume's name, the pod's and the
	// template's as compact JSON (CompactJSON).
	MessageVolumeDiffers = volumeDiffers + "the pod's is %s, " + volumeDiffersTemplate
	// MessageVolumeDiffersTemplateOnly is MessageVolumeDiffers without the
	// pod's volume, for the admission policy: CEL cannot write the Pod's
	// volume as JSON. Field, the volume's name, the template's volume.
	MessageVolumeDiffersTemplateOnly = volumeDiffers + volumeDiffersTemplate
	volumeDiffers                    = "%s: volume %s already exists and differs from the template's: "
	volumeDiffersTemplate            = "the template's is %s (rename one, or make them equal so the pod's is used)"
	// MessagePortOwned names a port for MessageProfileConflict: the port
	// (NUMBER/PROTOCOL), field, the app's sidecar and this one's.
	MessagePortOwned = "port %s (%s, sidecars %s and %s)"
	// MessagePortUsed: field, the sidecar, its port, the container.
	MessagePortUsed = "%s: sidecar %s port %s is already used by container %s"
	// MessagePortReserved: field, the sidecar, the port, what binds it
	// there (the reserved port's description), the container.
	MessagePortReserved = "%s: sidecar %s binds port %s (%s), which container %s already uses (the app must listen on another port)"
	// MessagePortValue: where, the annotation key, the value, the sidecar
	// using that port, what it is.
	MessagePortValue = "%s[%s]: %s is a port of sidecar %s (%s), not the app's"
	// MessageComputedPort: the parameter, the port its expression gives,
	// the sidecar using it, what it is.
	MessageComputedPort = "parameters: %s: the expression gives port %s, a port of sidecar %s (%s), not the app's"
	// MessageBadOverride: where, the annotation key, the value, the type's
	// Example, the parameter's field.
	MessageBadOverride = "%s[%s]: %s is not %s (it sets %s)"
)

func message(format string, args ...string) string {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	return fmt.Sprintf(format, a...)
}

// profileConflict is the message when another profile (ownerName, as
// naming.ProfileName gives it) already added what profile would add. what
// names the thing, its kind first: `container "envoy" (spec.containers)`.
func profileConflict(what, ownerName, profile string) string {
	kind, _, _ := strings.Cut(what, " ")
	return message(MessageProfileConflict, what, ownerName, naming.ProfileName(profile), kind)
}
