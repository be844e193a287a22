package fleet_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

const onDeleteSet = `apiVersion: apps/v1
kind: KIND
metadata: {name: db, namespace: ns, uid: uid-db, annotations: {deprecated.daemonset.template.generation: "3"}}
spec:
  updateStrategy: {type: OnDelete}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: app, image: postgres}]
status: {currentRevision: db-old, updateRevision: db-new}
`

// podOf is a Pod the workload's controller made at revision (the
// StatefulSet's label, or the DaemonSet's generation) from template, a
// pod template with its record.
func podOf(t *testing.T, kind, name, revision string, template *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	meta, _, _ := unstructured.NestedMap(template.Object, "spec", "template", "metadata")
	spec, _, _ := unstructured.NestedMap(template.Object, "spec", "template", "spec")
	labels, _ := meta["labels"].(map[string]any)
	labels["controller-revision-hash"] = revision
	if kind == "DaemonSet" {
		labels["pod-template-generation"] = revision
	}
	meta["name"], meta["namespace"] = name, "ns"
	meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": "db", "uid": "uid-db", "controller": true}}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}}
}

// TestOnDelete: the Pods of an OnDelete StatefulSet or DaemonSet are
// current once they run the workload's revision and its record, whatever
// status.currentRevision says (the controller does not move it under
// OnDelete); a Pod of an older revision is behind, and the hint is
// kubectl inject restart, which deletes it, never a rollout restart, which
// would not replace it.
func TestOnDelete(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kind, current, older string }{
		{"StatefulSet", "db-new", "db-old"},
		{"DaemonSet", "3", "2"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			set := injected(t, in, strings.ReplaceAll(onDeleteSet, "KIND", c.kind))
			updated := []*unstructured.Unstructured{podOf(t, c.kind, "db-0", c.current, set.DeepCopy()), podOf(t, c.kind, "db-1", c.current, set.DeepCopy())}
			rows := fleet.Build(in, append([]*unstructured.Unstructured{set}, updated...))
			if len(rows) != 1 || rows[0].State != fleet.Current || rows[0].Pods != 2 || rows[0].PodsBehind != 0 || rows[0].NeedsAttention() {
				t.Fatalf("every Pod at the updated revision: %+v", rows)
			}
			older := podOf(t, c.kind, "db-1", c.older, set.DeepCopy())
			rows = fleet.Build(in, []*unstructured.Unstructured{set, updated[0], older})
			if rows[0].PodsBehind != 1 {
				t.Fatalf("a Pod of the older revision, with the current record: %+v", rows[0])
			}
			want := "kubectl inject restart " + strings.ToLower(c.kind) + ".apps/db -n ns"
			if rows[0].Restart != want {
				t.Errorf("restart hint %q, want %q", rows[0].Restart, want)
			}
			if fleet.PodBehind(in, set, updated[0]) || !fleet.PodBehind(in, set, older) {
				t.Errorf("PodBehind: updated %v, older %v; want false, true", fleet.PodBehind(in, set, updated[0]), fleet.PodBehind(in, set, older))
			}
		})
	}
}
