package rollout

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAdmissionThroughControllers turns admission on in a namespace and
// lets a ReplicaSet and a Job create their Pods: every Pod comes out with
// the sidecar and its status record, the ReplicaSet's template stays as
// written, the Job completes, and status counts the Pods as current.
func TestAdmissionThroughControllers(t *testing.T) {
	c.Require(t)
	ns := namespace(t, "a")
	v1 := writeFile(t, "v1.yaml", sidecarV1)
	enableAdmission(t, v1, ns)

	create(t, ns, replicasets, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`)
	create(t, ns, jobs, `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox:1.36}]
`)
	eventually(t, time.Minute, "3 Pods of the ReplicaSet and a complete Job", func() bool {
		job := get(t, ns, jobs, "migrate")
		succeeded, _, _ := unstructured.NestedInt64(job.Object, "status", "succeeded")
		return len(podsOf(t, ns, "web")) == 3 && succeeded == 2
	})
	all := list(t, ns, pods)
	if len(all) != 5 {
		t.Fatalf("%d Pods, want 3 from the ReplicaSet and 2 from the Job", len(all))
	}
	for _, p := range all {
		if !hasImage(p, "envoyproxy/envoy:v1.33.0") {
			t.Errorf("Pod %s was not injected at admission: %v", p.GetName(), images(p))
		}
		if _, ok := p.GetAnnotations()[naming.StatusAnnotation]; !ok {
			t.Errorf("Pod %s has no status record", p.GetName())
		}
	}
	rs := get(t, ns, replicasets, "web")
	if l, _, _ := unstructured.NestedSlice(rs.Object, "spec", "template", "spec", "containers"); len(l) != 1 {
		t.Errorf("the ReplicaSet's template changed: %v", l)
	}
	for _, r := range statusRows(t, "-n", ns, "--template", v1) {
		if r.PodsBehind != 0 || r.State == "outdated" {
			t.Errorf("status row %s: %s, %d behind", r.Ref(), r.State, r.PodsBehind)
		}
		if r.Kind == "ReplicaSet" && r.Pods != 3 {
			t.Errorf("the ReplicaSet counts %d Pods", r.Pods)
		}
	}
}

// podsOf lists the Pods of ns labelled app=name.
func podsOf(t testing.TB, ns, name string) []unstructured.Unstructured {
	t.Helper()
	l, err := client(t).Resource(pods).Namespace(ns).List(context.Background(), metav1.ListOptions{LabelSelector: fmt.Sprintf("app=%s", name)})
	if err != nil {
		t.Fatal(err)
	}
	var out []unstructured.Unstructured
	for _, p := range l.Items {
		if p.GetDeletionTimestamp() == nil {
			out = append(out, p)
		}
	}
	return out
}
