package live

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Result is the outcome for one target.
type Result struct {
	// Ref names the object that was processed the way kubectl does
	// ("deployment.apps/web"); for a Pod resolved to its owner, the owner.
	Ref       string
	Namespace string
	Action    inject.Action
	Reason    inject.Reason
	// Message explains a skip or an error.
	Message string
	// Via names the object the user asked for when the Patcher followed
	// ownerReferences to Ref ("pod/web-abc-x via replicaset.apps/web-abc").
	Via string
	// Warnings are printed before the result line.
	Warnings []string
	// DryRun is the strategy in effect when a change was only simulated.
	DryRun dryrun.Strategy
	// Requests counts the write requests sent (PATCH, DELETE, POST).
	Requests int
	// Object is the object after the change (or as it would be, on a dry
	// run); nil on error. Before is the object as it was read.
	Object *unstructured.Unstructured
	Before *unstructured.Unstructured
	// Err is set when Action is inject.Failed.
	Err error
}

// Failed reports whether the target could not be processed.
func (r Result) Failed() bool { return r.Action == inject.Failed }

// Changed reports whether the target was (or, on a dry run or check, would
// be) changed.
func (r Result) Changed() bool {
	switch r.Action {
	case inject.Injected, inject.Updated, inject.Uninjected:
		return true
	}
	return false
}

// String renders the result as kubectl prints one object:
// "deployment.apps/web injected", "pod/x skipped: host_network",
// "deployment.apps/web injected (server dry run)".
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Ref)
	b.WriteByte(' ')
	b.WriteString(string(r.Action))
	switch {
	case r.Action == inject.Failed:
		msg := r.Message
		if r.Err != nil {
			msg = r.Err.Error()
		}
		if r.Reason != "" && !strings.HasPrefix(msg, string(r.Reason)) {
			msg = string(r.Reason) + ": " + msg
		}
		fmt.Fprintf(&b, ": %s", msg)
	case r.Action == inject.Skipped && r.Reason != "":
		fmt.Fprintf(&b, ": %s", r.Reason)
	}
	if r.Via != "" {
		fmt.Fprintf(&b, " (from %s)", r.Via)
	}
	switch r.DryRun {
	case dryrun.Client:
		b.WriteString(" (dry run)")
	case dryrun.Server:
		b.WriteString(" (server dry run)")
	}
	return b.String()
}
