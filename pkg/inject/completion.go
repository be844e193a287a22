package inject

import (
	"slices"
	"strconv"
	"strings"
)

// A classic sidecar (an app container) keeps a Pod running for as long as
// it runs, and a proxy runs until it is stopped: in a Pod that runs to
// completion (a Job's, a CronJob's, any with restartPolicy Never or
// OnFailure) the app exits and the Pod never does, so the Job never
// finishes. Native sidecars (init containers with restartPolicy: Always)
// are stopped by the kubelet once the app has exited. The injector refuses
// the classic form there, in every front end and at admission.

// ReasonRunsToCompletion: a classic sidecar refused for a Pod that runs to
// completion.
const ReasonRunsToCompletion Reason = "runs_to_completion"

// MessageRunsToCompletion: the field that makes the Pod run to completion
// (its restartPolicy, or the object's kind), its value (quoted), the
// template's classic sidecars (quoted, joined by ", "). The admission
// policy writes it too.
const MessageRunsToCompletion = "%s: %s: the pod runs to completion, and classic sidecar %s would keep it running after the app exits (inject a native sidecar: --native, or native: true)"

// CompletingRestartPolicies are the restartPolicy values of a Pod that
// runs to completion.
var CompletingRestartPolicies = []string{"Never", "OnFailure"}

// completingKinds are the kinds whose Pods run to completion whatever
// their restartPolicy says (a Job accepts only Never and OnFailure).
var completingKinds = []string{"Job", "CronJob"}

// ClassicSidecars lists the names of the template's classic sidecars (its
// containers), joined for MessageRunsToCompletion, or "" when it has none.
func (t *Template) ClassicSidecars() string {
	names := namesOf(t.Containers)
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return strings.Join(names, ", ")
}

// refuseClassicForCompletion returns the refusal of a template with a
// classic sidecar for a pod that runs to completion: the field that says
// so and the message, or "" and "" when the pod runs until stopped or the
// template has no classic sidecar.
func (in *Injector) refuseClassicForCompletion(t *podTarget) (field, msg string) {
	sidecars := in.template.ClassicSidecars()
	if sidecars == "" {
		return "", ""
	}
	field, value := t.specField("restartPolicy"), scalarField(t.spec, "restartPolicy")
	if !slices.Contains(CompletingRestartPolicies, value) {
		field, value = "kind", scalarField(t.obj, "kind")
		if !slices.Contains(completingKinds, value) {
			return "", ""
		}
	}
	return field, message(MessageRunsToCompletion, field, strconv.Quote(value), sidecars)
}
