package rollout

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOldPodsFirstRevision: a Deployment's first ReplicaSet (revision 1)
// is its current one, and a Pod of a ReplicaSet that names no revision is
// old; with no ReplicaSet that names one, no Pod is judged old.
func TestOldPodsFirstRevision(t *testing.T) {
	t.Parallel()
	deploy := object(t, `{kind: Deployment, metadata: {name: web, uid: d, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}`)
	first := object(t, `{kind: ReplicaSet, metadata: {name: web-1, uid: rs1, annotations: {deployment.kubernetes.io/revision: "1"}}}`)
	unnumbered := object(t, `{kind: ReplicaSet, metadata: {name: web-x, uid: rsx}}`)
	pods := []*unstructured.Unstructured{pod(t, "web-1-a", "rs1", "", false), pod(t, "web-x-a", "rsx", "", true)}
	got := Complete(deploy, Owned{ReplicaSets: []*unstructured.Unstructured{unnumbered, first}, Pods: pods})
	if want := (Progress{Message: "1 old Pod is terminating: web-x-a"}); got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if old := OldPods(deploy, Owned{ReplicaSets: []*unstructured.Unstructured{unnumbered}, Pods: pods}); len(old) != 0 {
		t.Errorf("no ReplicaSet names a revision, yet %d Pods are old", len(old))
	}
}

// TestOldPodsAbovePartition: a StatefulSet with a partition rolls only
// the Pods whose ordinal is at or above it; those of an older revision
// there are old, below it they are kept, and a Pod whose name holds no
// ordinal counts as ordinal 0.
func TestOldPodsAbovePartition(t *testing.T) {
	t.Parallel()
	set := object(t, `{kind: StatefulSet, metadata: {name: db, uid: s, generation: 2}, spec: {replicas: 4, updateStrategy: {rollingUpdate: {partition: 2}}}, status: {observedGeneration: 2, updateRevision: db-2}}`)
	var pods []*unstructured.Unstructured
	for _, name := range []string{"db-0", "db-1", "db-2", "db-3", "db-x"} {
		pods = append(pods, pod(t, name, "s", "controller-revision-hash: db-1", false))
	}
	var got []string
	for _, p := range OldPods(set, Owned{Pods: pods}) {
		got = append(got, p.GetName())
	}
	if len(got) != 2 || got[0] != "db-2" || got[1] != "db-3" {
		t.Errorf("old %v, want [db-2 db-3]", got)
	}
}

// TestOldPodsMessageThree names three Pods without "and 0 more".
func TestOldPodsMessageThree(t *testing.T) {
	t.Parallel()
	old := []*unstructured.Unstructured{pod(t, "c", "rs1", "", false), pod(t, "a", "rs1", "", true), pod(t, "b", "rs1", "", false)}
	if got, want := oldPodsMessage(old), "3 old Pods are left (1 terminating): a, b, c"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNewestReplicaSet: the ReplicaSet of the highest revision is the
// newest, the first listed of two that name the same revision, and none
// names a revision below the first (0, or a negative number).
func TestNewestReplicaSet(t *testing.T) {
	t.Parallel()
	rs := func(name, revision string) *unstructured.Unstructured {
		return object(t, `{kind: ReplicaSet, metadata: {name: `+name+`, annotations: {deployment.kubernetes.io/revision: "`+revision+`"}}}`)
	}
	for _, tc := range []struct {
		name string
		sets []*unstructured.Unstructured
		want string // "" for none
	}{
		{"the highest", []*unstructured.Unstructured{rs("a", "2"), rs("b", "10"), rs("c", "3")}, "b"},
		{"the first of the same revision", []*unstructured.Unstructured{rs("a", "4"), rs("b", "4")}, "a"},
		{"a negative revision", []*unstructured.Unstructured{rs("a", "-1")}, ""},
		{"no number", []*unstructured.Unstructured{rs("a", "x")}, ""},
		{"none", nil, ""},
	} {
		got := ""
		if n := newestReplicaSet(tc.sets); n != nil {
			got = n.GetName()
		}
		if got != tc.want {
			t.Errorf("%s: newest %q, want %q", tc.name, got, tc.want)
		}
	}
}
