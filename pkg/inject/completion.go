package inject

import (
	"slices"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
)

// A classic sidecar (an app container) keeps a Pod running for as long as
// it runs, and a proxy runs until it is stopped: in a Pod that runs to
// completion (a Job's, a CronJob's, any with restartPolicy Never or
// OnFailure) the app exits and the Pod never does, so the Job never
// finishes. Native sidecars (init containers with restartPolicy: Always)
// are stopped by the kubelet once the app has exited. The injector refuses
// the classic form there, in every front end and at admission.

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

// refuseClassicForCompletion fails e when the template has a classic
// sidecar and the pod runs to completion, naming the field that says so
// and where it is. It reports whether it did.
func (in *Injector) refuseClassicForCompletion(t *podTarget, e *Entry) bool {
	sidecars := in.template.ClassicSidecars()
	if sidecars == "" {
		return false
	}
	field, node := t.specField("restartPolicy"), nodes.MapValue(t.spec, "restartPolicy")
	if node == nil || !slices.Contains(CompletingRestartPolicies, node.Value) {
		field, node = "kind", nodes.MapValue(t.obj, "kind")
		if node == nil || !slices.Contains(completingKinds, node.Value) {
			return false
		}
	}
	e.Action, e.Reason, e.Field, e.Line, e.Column = Failed, ReasonRunsToCompletion, field, node.Line, node.Column
	e.Message = message(MessageRunsToCompletion, field, strconv.Quote(node.Value), sidecars)
	return true
}
