// Package rollout plans and runs kubectl inject restart: it brings the
// workloads whose Pods run an outdated or missing sidecar (the rows
// kubectl inject status reports as behind) to the current template, a
// bounded number at a time.
//
// Plan turns status rows (pkg/fleet) and the objects they were built from
// into Steps, one per workload, each with an Action:
//
//   - Restart: a rollout restart, the kubectl.kubernetes.io/restartedAt
//     annotation on the pod template as kubectl sets it, for workloads
//     injected at admission (their new Pods get the current sidecar there);
//   - Reinject: injection with the current template (pkg/live), for
//     workloads injected through their templates; the template change
//     rolls them;
//   - DeletePods: for an OnDelete StatefulSet or DaemonSet, or a ReplicaSet
//     with no Deployment, whose controller replaces deleted Pods but never
//     rolls: its Pods that are behind are deleted one at a time, each
//     replacement waited on until Ready (after injection, when the
//     template is outdated);
//   - Wait: a rollout already under way (an earlier run that was stopped)
//     is only waited on, so that a second run resumes rather than
//     restarting again;
//   - InPlace: for Pods injected at admission and OnDelete workloads whose
//     Pods behind differ from the current template only in the sidecars'
//     images (PlanOptions.Strategy auto or in-place), each Pod is upgraded
//     in place, one PATCH of its images and record, in batches within the
//     workload's budget (InPlaceBudget), each Pod drained first by the
//     command (its template's drain step); auto recreates a one-replica
//     Deployment and a Pod on a kubelet older than
//     SidecarImageRestartVersion
//     (after injection, when an OnDelete template is outdated);
//   - Report: bare Pods (unless Recreate) and Jobs are left alone and
//     reported: a Pod cannot gain containers, and a Job's Pods finish on
//     their own (the next Job of a CronJob gets the current template).
//
// DecideUpgrade judges one Pod: the core injects a copy, and the Pod can
// be upgraded in place when the copy differs from it only in the recorded
// sidecars' images and the record (fields the API server fills in do not
// count); Upgrade.Patch is the one request that does it, RollbackPatch
// the one that undoes it. PodUpgrades judges a workload's Pods, and each
// step names its Strategy and why.
//
// Status judges, from a workload as the API server returns it, whether
// its rollout is complete, under way or failed, as kubectl rollout status
// does; it is pure. Complete adds the workload's Pods: a rollout is not
// done while a Pod of an older template is left, terminating ones
// included, which the workload's own status does not count. Run executes
// a plan: at most MaxInFlight workloads move at once, each waited on until
// its rollout completes or its progress deadline passes; the first failure stops new starts, lets those
// in flight finish, and is reported with the workload and the reason.
// Closing the stop channel (SIGINT in the command) does the same. The
// cluster side (patches, deletes, watches) is the Mover the command
// passes in, so the scheduling is tested without a cluster.
package rollout
