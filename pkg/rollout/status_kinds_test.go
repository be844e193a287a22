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
