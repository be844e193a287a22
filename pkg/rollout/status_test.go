package rollout

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// object decodes YAML as the dynamic client does (numbers as int64).
func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, manifest string
		want           Progress
	}{
		{"deployment not observed", `{kind: Deployment, metadata: {name: d, generation: 3}, status: {observedGeneration: 2}}`,
			Progress{Message: "waiting for the controller to observe the change"}},
		{"deployment updating", `{kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3}, status: {observedGeneration: 2, replicas: 4, updatedReplicas: 1}}`,
			Progress{Message: "1 of 3 new Pods have been updated"}},
		{"deployment old pods left", `{kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3}, status: {observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 3}}`,
			Progress{Message: "1 old Pods are pending termination"}},
		{"deployment done", `{kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3}, status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3}}`,
			Progress{Done: true, Message: "3 of 3 updated Pods are available"}},
		{"deployment deadline", `{kind: Deployment, metadata: {name: d, generation: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 1, conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: 'ReplicaSet "d-1" has timed out progressing.'}]}}`,
			Progress{Failed: ReasonProgressDeadline, Message: `ReplicaSet "d-1" has timed out progressing.`}},
		{"deployment paused", `{kind: Deployment, metadata: {name: d}, spec: {paused: true}}`,
			Progress{Failed: ReasonPaused, Message: "the Deployment is paused (kubectl rollout resume)"}},
		{"statefulset revisions differ", `{kind: StatefulSet, metadata: {name: s, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, readyReplicas: 2, updatedReplicas: 1, currentRevision: s-1, updateRevision: s-2}}`,
			Progress{Message: "1 of 2 Pods are updated"}},
		{"statefulset done", `{kind: StatefulSet, metadata: {name: s, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2, currentRevision: s-2, updateRevision: s-2}}`,
			Progress{Done: true, Message: "2 of 2 Pods are ready"}},
		{"statefulset on delete", `{kind: StatefulSet, metadata: {name: s, generation: 2}, spec: {replicas: 2, updateStrategy: {type: OnDelete}}, status: {observedGeneration: 2, readyReplicas: 2, updatedReplicas: 0, currentRevision: s-1, updateRevision: s-2}}`,
			Progress{Done: true, Message: "2 of 2 Pods are ready"}},
		{"daemonset updating", `{kind: DaemonSet, metadata: {name: ds, generation: 2}, status: {observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2}}`,
			Progress{Message: "2 of 3 updated Pods are available"}},
		{"cronjob", `{kind: CronJob, metadata: {name: c}}`, Progress{Done: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Status(object(t, tc.manifest)); got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
