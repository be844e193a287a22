package rollout

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pod is a Pod named name controlled by the object of uid, with labels
// (a flow map's inside, "" for none), terminating when asked.
func pod(t *testing.T, name, uid, labels string, terminating bool) *unstructured.Unstructured {
	t.Helper()
	deletion := ""
	if terminating {
		deletion = ", deletionTimestamp: '2026-12-04T21:00:00Z'"
	}
	return object(t, fmt.Sprintf(`{kind: Pod, metadata: {name: %s, labels: {%s}, ownerReferences: [{kind: X, name: x, uid: %s, controller: true}]%s}}`, name, labels, uid, deletion))
}

// TestComplete: a rollout its controller's status calls complete is not
// while a Pod of an older template is left, terminating or not (the
// status counts no terminating Pod); a terminating Pod of the current
// template, an OnDelete workload's old Pods and a StatefulSet's below
// its partition do not hold it.
func TestComplete(t *testing.T) {
	t.Parallel()
	const (
		deployDone = `{kind: Deployment, metadata: {name: web, uid: d, generation: 2}, spec: {replicas: 1}, status: {observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}`
		setDone    = `{kind: StatefulSet, metadata: {name: db, uid: s, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2, currentRevision: db-2, updateRevision: db-2}}`
		dsDone     = `{kind: DaemonSet, metadata: {name: agent, uid: ds, generation: 3, annotations: {deprecated.daemonset.template.generation: "3"}}, status: {observedGeneration: 3, desiredNumberScheduled: 1, updatedNumberScheduled: 1, numberAvailable: 1}}`
	)
	sets := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{
			object(t, `{kind: ReplicaSet, metadata: {name: web-1, uid: rs1, annotations: {deployment.kubernetes.io/revision: "1"}}}`),
			object(t, `{kind: ReplicaSet, metadata: {name: web-2, uid: rs2, annotations: {deployment.kubernetes.io/revision: "2"}}}`),
		}
	}
	for _, tc := range []struct {
		name, manifest string
		owned          func() Owned
		want           Progress
	}{
		{"deployment with an old Pod terminating", deployDone, func() Owned {
			return Owned{ReplicaSets: sets(), Pods: []*unstructured.Unstructured{pod(t, "web-2-a", "rs2", "", false), pod(t, "web-1-a", "rs1", "", true)}}
		}, Progress{Message: "1 old Pod is terminating: web-1-a"}},
		{"deployment with old Pods left", deployDone, func() Owned {
			return Owned{ReplicaSets: sets(), Pods: []*unstructured.Unstructured{pod(t, "web-1-a", "rs1", "", true), pod(t, "web-1-b", "rs1", "", false)}}
		}, Progress{Message: "2 old Pods are left (1 terminating): web-1-a, web-1-b"}},
		{"deployment with a current Pod terminating", deployDone, func() Owned {
			return Owned{ReplicaSets: sets(), Pods: []*unstructured.Unstructured{pod(t, "web-2-a", "rs2", "", false), pod(t, "web-2-b", "rs2", "", true)}}
		}, Progress{Done: true, Message: "1 of 1 updated Pods are available"}},
		{"deployment with no old Pod", deployDone, func() Owned {
			return Owned{ReplicaSets: sets(), Pods: []*unstructured.Unstructured{pod(t, "web-2-a", "rs2", "", false)}}
		}, Progress{Done: true, Message: "1 of 1 updated Pods are available"}},
		{"deployment under way by its status", `{kind: Deployment, metadata: {name: web, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 1}}`, func() Owned {
			return Owned{ReplicaSets: sets(), Pods: []*unstructured.Unstructured{pod(t, "web-1-a", "rs1", "", true)}}
		}, Progress{Message: "1 of 2 new Pods have been updated"}},
		{"statefulset with an old revision terminating", setDone, func() Owned {
			return Owned{Pods: []*unstructured.Unstructured{pod(t, "db-0", "s", "controller-revision-hash: db-2", false), pod(t, "db-1", "s", "controller-revision-hash: db-1", true)}}
		}, Progress{Message: "1 old Pod is terminating: db-1"}},
		{"statefulset old revision below its partition", `{kind: StatefulSet, metadata: {name: db, generation: 2}, spec: {replicas: 2, updateStrategy: {rollingUpdate: {partition: 1}}}, status: {observedGeneration: 2, readyReplicas: 2, updatedReplicas: 1, currentRevision: db-1, updateRevision: db-2}}`, func() Owned {
			return Owned{Pods: []*unstructured.Unstructured{pod(t, "db-0", "s", "controller-revision-hash: db-1", true), pod(t, "db-1", "s", "controller-revision-hash: db-2", false)}}
		}, Progress{Done: true}},
		{"daemonset with an old generation terminating", dsDone, func() Owned {
			return Owned{Pods: []*unstructured.Unstructured{pod(t, "agent-x", "ds", "pod-template-generation: '3'", false), pod(t, "agent-y", "ds", "pod-template-generation: '2'", true)}}
		}, Progress{Message: "1 old Pod is terminating: agent-y"}},
		{"ondelete statefulset keeps its old Pods", `{kind: StatefulSet, metadata: {name: db, generation: 2}, spec: {replicas: 1, updateStrategy: {type: OnDelete}}, status: {observedGeneration: 2, readyReplicas: 1, updateRevision: db-2}}`, func() Owned {
			return Owned{Pods: []*unstructured.Unstructured{pod(t, "db-0", "s", "controller-revision-hash: db-1", false)}}
		}, Progress{Done: true, Message: "1 of 1 Pods are ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Complete(object(t, tc.manifest), tc.owned()); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestOldPodsMessage names three Pods at most, in order.
func TestOldPodsMessage(t *testing.T) {
	t.Parallel()
	var old []*unstructured.Unstructured
	for _, name := range []string{"e", "b", "d", "a", "c"} {
		old = append(old, pod(t, name, "rs1", "", true))
	}
	if got, want := oldPodsMessage(old), "5 old Pods are terminating: a, b, c, and 2 more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
