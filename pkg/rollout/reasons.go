package rollout

import "github.com/kinject/kubectl-inject/pkg/reason"

// Reasons a workload is not brought to current (stable snake_case codes:
// they appear in reports).
const (
	// ReasonProgressDeadline: the rollout made no progress within its
	// deadline (a Deployment's progressDeadlineSeconds, or --progress-deadline).
	ReasonProgressDeadline reason.Code = "progress_deadline_exceeded"
	// ReasonPaused: a paused Deployment never rolls.
	ReasonPaused reason.Code = "paused"
	// ReasonGone: the workload was deleted while it was waited on.
	ReasonGone reason.Code = "deleted"
	// ReasonInjection: injecting the current template failed.
	ReasonInjection reason.Code = "injection_failed"
	// ReasonAPI: a request failed.
	ReasonAPI reason.Code = "api_error"
	// ReasonInterrupted: the run was interrupted (the workload was not
	// started, or not waited on to the end).
	ReasonInterrupted reason.Code = "interrupted"
	// ReasonNotStarted: an earlier workload failed, so this one was left
	// as it was.
	ReasonNotStarted reason.Code = "not_started"
	// ReasonJob: a Job's Pods are not restarted; they finish on their own.
	ReasonJob reason.Code = "job"
	// ReasonError: status could not classify the workload (a conflict, an
	// invalid object): fix it first.
	ReasonError reason.Code = "error"
)

// Reasons a Pod is recreated rather than upgraded in place.
const (
	// ReasonNotImageOnly: the current template changes more than the
	// sidecars' images (an argument, a port, a volume...), which a running
	// Pod cannot take.
	ReasonNotImageOnly reason.Code = "not_image_only"
	// ReasonAlreadyCurrent: the Pod runs the current template already.
	ReasonAlreadyCurrent reason.Code = "already_current"
	// ReasonRolledBack: a Pod upgraded in place was not Ready on its new
	// sidecar within the deadline and was patched back to its old images.
	ReasonRolledBack reason.Code = "rolled_back"
	// ReasonDrain: a Pod's proxy could not be taken out of service before
	// its upgrade in place (the drain endpoint failed, or the Pod stayed
	// in its Services' endpoints); nothing of the Pod was changed.
	ReasonDrain reason.Code = "drain_failed"
	// ReasonOldKubelet: the Pod's node runs a kubelet that does not
	// restart a native sidecar whose image changed.
	ReasonOldKubelet reason.Code = "kubelet_too_old"
	// ReasonSingleReplica: a Deployment of one replica, which an upgrade
	// in place would leave with no Pod serving while it is drained; its
	// rollout surges a new Pod first.
	ReasonSingleReplica reason.Code = "single_replica"
)

// Reasons restart chooses a strategy for.
const (
	// ReasonInPlaceNotPossible: --strategy in-place, and the workload cannot be
	// upgraded in place (the step's message says why).
	ReasonInPlaceNotPossible reason.Code = "in_place_not_possible"
)

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
	reason.NewRow(ReasonInPlaceNotPossible, byRestart, "left alone", "--strategy in-place, and the workload cannot be upgraded in place (the message says why)"),
}

var (
	byRestart                 = []reason.Giver{reason.Restart}
	byRestartAndStatus        = []reason.Giver{reason.Restart, reason.Status}
	byRestartStatusAndExplain = []reason.Giver{reason.Restart, reason.Status, reason.Explain}
)

// ReasonRows returns the rows of the codes this package declares.
func ReasonRows() []reason.Row { return append([]reason.Row(nil), reasonRows...) }
