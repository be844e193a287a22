package rollout

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// deploymentRevision is the annotation by which the Deployment controller
// numbers a Deployment's ReplicaSets: the one of its current template
// has the highest (a rollback renumbers the ReplicaSet it brings back).
const deploymentRevision = "deployment.kubernetes.io/revision"

// Owned is what a workload's controllers made, as the caller has read it.
type Owned struct {
	// ReplicaSets are a Deployment's (nil for other kinds).
	ReplicaSets []*unstructured.Unstructured
	// Pods are the workload's Pods; for a Deployment, its ReplicaSets'.
	Pods []*unstructured.Unstructured
}

// Complete judges a rollout as Status does, then holds a complete one
// under way while a Pod of an older pod template is left, terminating
// ones included. A controller's status leaves terminating Pods out (a
// ReplicaSet counts only active Pods), so it calls a rollout complete
// while the old Pods still run out their grace period (a preStop hook,
// a slow shutdown); kubectl rollout status waits for them, and so does a
// restart. An OnDelete StatefulSet or DaemonSet keeps its old Pods by
// design: Status alone judges it.
func Complete(obj *unstructured.Unstructured, owned Owned) Progress {
	p := Status(obj)
	if !p.Done || OnDelete(obj) {
		return p
	}
	if old := OldPods(obj, owned); len(old) > 0 {
		return Progress{Message: oldPodsMessage(old)}
	}
	return p
}

// OldPods returns the Pods of owned made from an older pod template than
// obj's, terminating or not: for a Deployment, the Pods of every
// ReplicaSet but the newest; for a StatefulSet or DaemonSet, those of an
// older revision (for a StatefulSet with a partition, above it only).
// Other kinds have none.
func OldPods(obj *unstructured.Unstructured, owned Owned) []*unstructured.Unstructured {
	var old []*unstructured.Unstructured
	switch obj.GetKind() {
	case "Deployment":
		current := newestReplicaSet(owned.ReplicaSets)
		if current == nil {
			return nil
		}
		for _, p := range owned.Pods {
			if !controlledBy(p, string(current.GetUID())) {
				old = append(old, p)
			}
		}
	case "StatefulSet", "DaemonSet":
		partition, _, _ := unstructured.NestedInt64(obj.Object, "spec", "updateStrategy", "rollingUpdate", "partition")
		for _, p := range owned.Pods {
			if fleet.OlderRevision(obj, p) && ordinal(obj.GetName(), p.GetName()) >= partition {
				old = append(old, p)
			}
		}
	}
	return old
}

// newestReplicaSet is the ReplicaSet of the highest revision, nil when
// none says.
func newestReplicaSet(sets []*unstructured.Unstructured) *unstructured.Unstructured {
	var newest *unstructured.Unstructured
	best := int64(-1)
	for _, rs := range sets {
		rev, err := strconv.ParseInt(rs.GetAnnotations()[deploymentRevision], 10, 64)
		if err == nil && rev > best {
			newest, best = rs, rev
		}
	}
	return newest
}

func controlledBy(o *unstructured.Unstructured, uid string) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return string(ref.UID) == uid
		}
	}
	return false
}

// ordinal is a StatefulSet Pod's ordinal (its name is set-N), 0 when the
// name does not say.
func ordinal(set, pod string) int64 {
	n, err := strconv.ParseInt(strings.TrimPrefix(pod, set+"-"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// oldPodsMessage says which old Pods a rollout waits for: "1 old Pod is
// terminating: web-5d9c-x2b4k". Three are named at most.
func oldPodsMessage(old []*unstructured.Unstructured) string {
	terminating := 0
	names := make([]string, 0, len(old))
	for _, p := range old {
		if p.GetDeletionTimestamp() != nil {
			terminating++
		}
		names = append(names, p.GetName())
	}
	sort.Strings(names)
	if len(names) > 3 {
		names = append(names[:3:3], fmt.Sprintf("and %d more", len(old)-3))
	}
	var what string
	switch {
	case terminating == len(old) && len(old) == 1:
		what = "1 old Pod is terminating"
	case terminating == len(old):
		what = fmt.Sprintf("%d old Pods are terminating", len(old))
	default:
		what = fmt.Sprintf("%d old Pods are left (%d terminating)", len(old), terminating)
	}
	return what + ": " + strings.Join(names, ", ")
}
