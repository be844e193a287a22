package fleet

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func object(kind, name, uid string, owner *unstructured.Unstructured) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetKind(kind)
	o.SetName(name)
	o.SetUID(types.UID(uid))
	if owner != nil {
		yes := true
		o.SetOwnerReferences([]metav1.OwnerReference{{Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes}})
	}
	return o
}

// Pods go to their top controller through ReplicaSets; a bare Pod and a
// terminating one go nowhere.
func TestWorkloads(t *testing.T) {
	deploy := object("Deployment", "web", "d", nil)
	rs := object("ReplicaSet", "web-1", "r", deploy)
	a, b := object("Pod", "web-1-a", "pa", rs), object("Pod", "web-1-b", "pb", rs)
	gone := object("Pod", "web-1-c", "pc", rs)
	now := metav1.Now()
	gone.SetDeletionTimestamp(&now)
	bare := object("Pod", "bare", "px", nil)
	sts := object("StatefulSet", "db", "s", nil)
	db0 := object("Pod", "db-0", "p0", sts)
	got := Workloads([]*unstructured.Unstructured{a, deploy, rs, b, gone, bare, sts, db0})
	if len(got) != 2 || got[0].Object != deploy || got[1].Object != sts {
		t.Fatalf("workloads %v", got)
	}
	if len(got[0].Pods) != 2 || got[0].Pods[0] != a || got[0].Pods[1] != b || len(got[1].Pods) != 1 || got[1].Pods[0] != db0 {
		t.Errorf("pods: %d and %d", len(got[0].Pods), len(got[1].Pods))
	}
}
