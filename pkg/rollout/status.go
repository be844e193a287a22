package rollout

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/reason"
)

// Progress is a workload's rollout as Status judges it.
type Progress struct {
	// Done: every Pod runs the current pod template and is available,
	// and no old Pod is left (by Status, as the workload's own status
	// counts them, which leaves terminating Pods out; by Complete, as
	// its Pods are, terminating ones included).
	Done bool
	// Failed is a reason code (ReasonProgressDeadline, ReasonPaused)
	// when the rollout cannot complete by itself.
	Failed reason.Code
	// Message says where the rollout is ("1 of 3 updated Pods are
	// available"), as kubectl rollout status does.
	Message string
}

// Status judges the rollout of a Deployment, StatefulSet or DaemonSet as
// the API server returns it. A rollout is under way until the controller
// has observed the object's generation. An OnDelete StatefulSet or
// DaemonSet never rolls by itself: it is done when its Pods are Ready,
// whatever template they run. Other kinds are done. The status it reads
// does not count terminating Pods: Complete does.
func Status(obj *unstructured.Unstructured) Progress {
	if obj == nil {
		return Progress{Failed: ReasonGone, Message: "the workload is gone"}
	}
	gen := obj.GetGeneration()
	observed := num(obj, "status", "observedGeneration")
	if observed < gen {
		return Progress{Message: "waiting for the controller to observe the change"}
	}
	kind := obj.GetKind()
	if (kind == "StatefulSet" || kind == "DaemonSet") && OnDelete(obj) {
		return onDeleteStatus(obj)
	}
	switch kind {
	case "Deployment":
		return deploymentStatus(obj)
	case "StatefulSet":
		return statefulSetStatus(obj)
	case "DaemonSet":
		return daemonSetStatus(obj)
	}
	return Progress{Done: true}
}

func deploymentStatus(obj *unstructured.Unstructured) Progress {
	if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); paused {
		return Progress{Failed: ReasonPaused, Message: "the Deployment is paused (kubectl rollout resume)"}
	}
	if c := condition(obj, "Progressing"); c != nil && c["reason"] == "ProgressDeadlineExceeded" {
		return Progress{Failed: ReasonProgressDeadline, Message: fmt.Sprint(c["message"])}
	}
	replicas := replicasOf(obj)
	updated := num(obj, "status", "updatedReplicas")
	total := num(obj, "status", "replicas")
	available := num(obj, "status", "availableReplicas")
	switch {
	case updated < replicas:
		return Progress{Message: fmt.Sprintf("%d of %d new Pods have been updated", updated, replicas)}
	case total > updated:
		return Progress{Message: fmt.Sprintf("%d old Pods are pending termination", total-updated)}
	case available < updated:
		return Progress{Message: fmt.Sprintf("%d of %d updated Pods are available", available, updated)}
	}
	return Progress{Done: true, Message: fmt.Sprintf("%d of %d updated Pods are available", available, replicas)}
}

func statefulSetStatus(obj *unstructured.Unstructured) Progress {
	replicas := replicasOf(obj)
	ready := num(obj, "status", "readyReplicas")
	if ready < replicas {
		return Progress{Message: fmt.Sprintf("%d of %d Pods are ready", ready, replicas)}
	}
	updated := num(obj, "status", "updatedReplicas")
	partition, _, _ := unstructured.NestedInt64(obj.Object, "spec", "updateStrategy", "rollingUpdate", "partition")
	if partition > 0 {
		if updated < replicas-partition {
			return Progress{Message: fmt.Sprintf("%d of %d Pods above the partition are updated", updated, replicas-partition)}
		}
		return Progress{Done: true}
	}
	current, _, _ := unstructured.NestedString(obj.Object, "status", "currentRevision")
	update, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision")
	if update != "" && current != update {
		return Progress{Message: fmt.Sprintf("%d of %d Pods are updated", updated, replicas)}
	}
	return Progress{Done: true, Message: fmt.Sprintf("%d of %d Pods are ready", ready, replicas)}
}

func daemonSetStatus(obj *unstructured.Unstructured) Progress {
	desired := num(obj, "status", "desiredNumberScheduled")
	updated := num(obj, "status", "updatedNumberScheduled")
	available := num(obj, "status", "numberAvailable")
	switch {
	case updated < desired:
		return Progress{Message: fmt.Sprintf("%d of %d Pods are updated", updated, desired)}
	case available < desired:
		return Progress{Message: fmt.Sprintf("%d of %d updated Pods are available", available, desired)}
	}
	return Progress{Done: true, Message: fmt.Sprintf("%d of %d updated Pods are available", available, desired)}
}

func onDeleteStatus(obj *unstructured.Unstructured) Progress {
	want, ready := replicasOf(obj), num(obj, "status", "readyReplicas")
	if obj.GetKind() == "DaemonSet" {
		want, ready = num(obj, "status", "desiredNumberScheduled"), num(obj, "status", "numberAvailable")
	}
	if ready < want {
		return Progress{Message: fmt.Sprintf("%d of %d Pods are ready", ready, want)}
	}
	return Progress{Done: true, Message: fmt.Sprintf("%d of %d Pods are ready", ready, want)}
}

// OnDelete reports a workload whose controller replaces deleted Pods but
// never replaces Pods by itself when its template changes: a StatefulSet
// or DaemonSet with the OnDelete update strategy, a ReplicaSet or
// ReplicationController (without a Deployment).
func OnDelete(obj *unstructured.Unstructured) bool {
	switch obj.GetKind() {
	case "StatefulSet", "DaemonSet":
		s, _, _ := unstructured.NestedString(obj.Object, "spec", "updateStrategy", "type")
		return s == "OnDelete"
	case "ReplicaSet", "ReplicationController":
		return true
	}
	return false
}

// DesiredPods is how many Pods a workload's controller keeps: spec.replicas,
// or for a DaemonSet the Nodes it is scheduled on.
func DesiredPods(obj *unstructured.Unstructured) int64 {
	if obj.GetKind() == "DaemonSet" {
		return num(obj, "status", "desiredNumberScheduled")
	}
	return replicasOf(obj)
}

// PodReady reports a Pod that is Ready and not being deleted.
func PodReady(pod *unstructured.Unstructured) bool {
	if pod.GetDeletionTimestamp() != nil {
		return false
	}
	c := condition(pod, "Ready")
	return c != nil && c["status"] == "True"
}

func replicasOf(obj *unstructured.Unstructured) int64 {
	r, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		return 1
	}
	return r
}

func num(obj *unstructured.Unstructured, path ...string) int64 {
	v, _, _ := unstructured.NestedInt64(obj.Object, path...)
	return v
}

func condition(obj *unstructured.Unstructured, typ string) map[string]any {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range list {
		c, ok := item.(map[string]any)
		if ok && c["type"] == typ {
			return c
		}
	}
	return nil
}
