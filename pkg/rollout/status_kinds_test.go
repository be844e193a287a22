package rollout

import "testing"

// TestStatusKindsThatDoNotRoll: Status judges the rollouts of
// Deployments, StatefulSets and DaemonSets; a ReplicaSet or a
// ReplicationController rolls nothing (it is OnDelete to a restart), so
// its status is done whatever its Pods are: the restart that deletes its
// Pods waits on them itself.
func TestStatusKindsThatDoNotRoll(t *testing.T) {
	t.Parallel()
	for _, manifest := range []string{
		`{kind: ReplicaSet, metadata: {name: web-1, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, replicas: 3, readyReplicas: 1}}`,
		`{kind: ReplicationController, metadata: {name: web, generation: 1}, spec: {replicas: 3}, status: {observedGeneration: 1, replicas: 3, readyReplicas: 1}}`,
	} {
		if got := Status(object(t, manifest)); got != (Progress{Done: true}) {
			t.Errorf("%s: %+v, want done", manifest, got)
		}
	}
}

// TestStatusAbovePartition: a StatefulSet rolling above its partition
// counts the Pods there.
func TestStatusAbovePartition(t *testing.T) {
	t.Parallel()
	got := Status(object(t, `{kind: StatefulSet, metadata: {name: s, generation: 2}, spec: {replicas: 4, updateStrategy: {rollingUpdate: {partition: 1}}}, status: {observedGeneration: 2, readyReplicas: 4, updatedReplicas: 1}}`))
	if want := (Progress{Message: "1 of 3 Pods above the partition are updated"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestDesiredPods: a DaemonSet wants a Pod per node it schedules to,
// other kinds their replicas (1 unless told).
func TestDesiredPods(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		manifest string
		want     int64
	}{
		{`{kind: DaemonSet, status: {desiredNumberScheduled: 5}}`, 5},
		{`{kind: StatefulSet, spec: {replicas: 3}, status: {desiredNumberScheduled: 5}}`, 3},
		{`{kind: Deployment}`, 1},
	} {
		if got := DesiredPods(object(t, tc.manifest)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.manifest, got, tc.want)
		}
	}
}

// TestPodReady: Ready is the Ready condition True of a Pod not being
// deleted.
func TestPodReady(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		manifest string
		want     bool
	}{
		{`{kind: Pod, status: {conditions: [{type: Ready, status: "True"}]}}`, true},
		{`{kind: Pod, status: {conditions: [{type: Ready, status: "False"}]}}`, false},
		{`{kind: Pod, status: {conditions: [{type: PodScheduled, status: "True"}]}}`, false},
		{`{kind: Pod, metadata: {deletionTimestamp: "2026-12-04T21:00:00Z"}, status: {conditions: [{type: Ready, status: "True"}]}}`, false},
	} {
		if got := PodReady(object(t, tc.manifest)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.manifest, got, tc.want)
		}
	}
}
