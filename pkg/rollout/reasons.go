package rollout

import "github.com/kinject/kubectl-inject/pkg/reason"

// reasonRows describe the codes this package declares, one row each: why
// restart moves a workload otherwise than asked, or not at all, and why
// status says it stays behind. The codes it shares with the core
// (bare_pod, system_namespace, missing_reference, not_injected,
// invalid_object) are the core's, in the core's table.
var reasonRows = []reason.Row{
	reason.NewRow(ReasonProgressDeadline, byRestart, "failed", "the rollout made no progress within its deadline (a Deployment's progressDeadlineSeconds, or --progress-deadline)"),
	reason.NewRow(ReasonPaused, byRestart, "failed", "the Deployment is paused, so it never rolls"),
	reason.NewRow(ReasonGone, byRestart, "failed", "the workload or its Pod was deleted while restart waited on it"),
	reason.NewRow(ReasonInjection, byRestart, "failed", "injecting the current template into the workload or its Pod failed"),
	reason.NewRow(ReasonAPI, byRestart, "failed", "a request to the API server failed"),
	reason.NewRow(ReasonInterrupted, byRestart, "not started, or failed", "the run was interrupted before the workload started, or while it was waited on"),
	reason.NewRow(ReasonNotStarted, byRestart, "not started", "an earlier workload failed, so this one was left as it was"),
	reason.NewRow(ReasonJob, byRestartAndStatus, "left alone", "a Job's Pods are not restarted: they finish on their own, and a CronJob's next Jobs get its template"),
	reason.NewRow(ReasonError, byRestartStatusAndExplain, "left alone", "the workload could not be classified (a conflict, an invalid object), or the admission policy fails on the Pod: fix it first"),
	reason.NewRow(ReasonNotImageOnly, byRestart, "recreated", "the current template changes more than the sidecars' images and resources (an argument, a port, a volume), which a running Pod cannot take"),
	reason.NewRow(ReasonAlreadyCurrent, byRestart, "left as it is", "the Pod runs the current template already"),
	reason.NewRow(ReasonRolledBack, byRestart, "failed, patched back", "a Pod upgraded in place was not Ready on its new sidecar within the deadline, and got its old images back"),
	reason.NewRow(ReasonDrain, byRestart, "failed, left as it was", "the Pod's proxy could not be taken out of service before its upgrade in place (the drain step failed, or the Pod stayed in its Services' endpoints)"),
	reason.NewRow(ReasonOldKubelet, byRestart, "recreated", "the Pod's node runs a kubelet that does not restart a native sidecar whose image changed"),
	reason.NewRow(ReasonSingleReplica, byRestart, "recreated", "a Deployment of one replica, which an upgrade in place would leave with no Pod serving while it is drained; its rollout surges a new Pod first"),
	reason.NewRow(ReasonRollsOnChange, byRestart, "recreated", "the workload's template carries the sidecar, and its controller rolls on a template change"),
	reason.NewRow(ReasonInPlaceNotPossible, byRestart, "left alone", "--strategy in-place, and the workload cannot be upgraded in place (the message says why)"),
}

var (
	byRestart                 = []reason.Giver{reason.Restart}
	byRestartAndStatus        = []reason.Giver{reason.Restart, reason.Status}
	byRestartStatusAndExplain = []reason.Giver{reason.Restart, reason.Status, reason.Explain}
)

// ReasonRows returns the rows of the codes this package declares.
func ReasonRows() []reason.Row { return append([]reason.Row(nil), reasonRows...) }
