package cmd

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestExplainTargets: what explain judges of each object it is named: a
// Pod of the cluster as it is (existing, so its sidecar's state is told
// too), a workload's pod template as a Pod named for the workload, with
// the template's labels and annotations; read from the cluster by
// TYPE/NAME, or from files, where nothing is existing; an object whose
// Pods no policy injects is left out, and nothing left is an error.
func TestExplainTargets(t *testing.T) {
	t.Parallel()
	const web = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata: {labels: {app: web}, annotations: {a: b}}
    spec: {containers: [{name: app, image: app}]}
`
	const bare = `apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: shop}
spec:
  template:
    spec: {containers: [{name: app, image: app}], restartPolicy: Never}
`
	const pod = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: shop, labels: {run: p}}
spec: {containers: [{name: app, image: app}]}
`
	const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n"
	kinds := map[schema.GroupVersionResource]string{}
	for _, r := range statusResources {
		kinds[r.gvr] = kindOf(r.gvr.Resource) + "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds,
		decode(t, web), decode(t, bare), decode(t, pod))

	type want struct {
		ref      string
		existing bool
		metadata map[string]any
	}
	webPod := map[string]any{"name": "web", "namespace": "shop", "labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "b"}}
	oncePod := map[string]any{"name": "once", "namespace": "shop"}
	podMeta := map[string]any{"name": "p", "namespace": "shop", "labels": map[string]any{"run": "p"}}
	check := func(t *testing.T, got []explainTarget, wants []want) {
		t.Helper()
		if len(got) != len(wants) {
			t.Fatalf("%d targets, want %d", len(got), len(wants))
		}
		for i, w := range wants {
			g := got[i]
			if g.ref != w.ref || g.existing != w.existing || g.pod.GetKind() != "Pod" || !reflect.DeepEqual(g.pod.Object["metadata"], w.metadata) {
				t.Errorf("target %d: %s existing=%v %s %v\nwant %s existing=%v Pod %v", i, g.ref, g.existing, g.pod.GetKind(), g.pod.Object["metadata"], w.ref, w.existing, w.metadata)
			}
		}
	}

	t.Run("from the cluster", func(t *testing.T) {
		o := &ExplainOptions{}
		got, err := o.targets(context.Background(), client, "shop", []string{"deploy/web", "job/once", "pod/p"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, []want{{"deployment/web", false, webPod}, {"job/once", false, oncePod}, {"pod/p", true, podMeta}})
	})
	t.Run("from files", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "in.yaml")
		if err := os.WriteFile(path, []byte(web+"---\n"+svc+"---\n"+pod), 0o644); err != nil {
			t.Fatal(err)
		}
		o := &ExplainOptions{}
		o.Flags.Filenames = []string{path}
		got, err := o.targets(context.Background(), client, "shop", nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, []want{{"deployment/web", false, webPod}, {"pod/p", false, podMeta}})
	})
	for _, tc := range []struct {
		name, input, want string
	}{
		{"nothing to explain", svc, "no Pod or workload to explain"},
		{"a template missing", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}\n", "deployment/web: spec.template: is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.yaml")
			if err := os.WriteFile(path, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			o := &ExplainOptions{}
			o.Flags.Filenames = []string{path}
			if _, err := o.targets(context.Background(), client, "shop", nil); err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %s", err, tc.want)
			}
		})
	}
}
