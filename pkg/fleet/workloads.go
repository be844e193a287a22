package fleet

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Workload is a top-level workload among listed objects and its Pods.
type Workload struct {
	Object *unstructured.Unstructured
	// Pods are the Pods it controls, through the listed ReplicaSets and
	// Jobs, that are not being deleted.
	Pods []*unstructured.Unstructured
}

// Workloads groups objs (workloads and Pods) as Build does: ReplicaSets
// and Jobs a Deployment or CronJob controls are folded into it, and each
// Pod goes to its top controller. Pods without a listed controller, and
// Pods being deleted, are left out. The order is objs'.
func Workloads(objs []*unstructured.Unstructured) []Workload {
	byUID := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byUID[string(o.GetUID())] = o
	}
	index := map[string]int{}
	var out []Workload
	for _, o := range objs {
		if o.GetKind() == "Pod" || topController(o, byUID) != o {
			continue
		}
		index[string(o.GetUID())] = len(out)
		out = append(out, Workload{Object: o})
	}
	for _, p := range objs {
		if p.GetKind() != "Pod" || p.GetDeletionTimestamp() != nil {
			continue
		}
		if i, ok := index[string(topController(p, byUID).GetUID())]; ok {
			out[i].Pods = append(out[i].Pods, p)
		}
	}
	return out
}
