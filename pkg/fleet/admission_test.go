package fleet_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestBuildAdmissionPods: Pods injected at admission (their owner's
// template has no record) count for their owner, a ReplicaSet alone or the
// Deployment above it, and are listed by themselves too; one injected
// with another template is behind. A conflict row is Failed.
func TestBuildAdmissionPods(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	oldTemplate, err := inject.ParseTemplate([]byte("containers:\n- name: envoy\n  image: envoyproxy/envoy:v1.30.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := inject.New(oldTemplate, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	rs := object(t, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: ns, uid: uid-rs}
spec: {template: {spec: {containers: [{name: app, image: nginx}]}}}
`)
	pod := func(name string, by *inject.Injector) *unstructured.Unstructured {
		return injected(t, by, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-rs, controller: true}]
spec: {containers: [{name: app, image: nginx}]}
`, name))
	}
	clash := object(t, strings.ReplaceAll(strings.Replace(deploy, "name: app", "name: envoy", 1), "NAME", "clash"))
	rows := fleet.Build(in, []*unstructured.Unstructured{rs, pod("web-a", in), pod("web-b", in), pod("web-c", old), clash})
	got := map[string]fleet.Row{}
	for _, r := range rows {
		got[r.Ref()] = r
	}
	cases := []struct {
		name, ref, state string
		pods, behind     int
		admission        bool
	}{
		{"the ReplicaSet counts its Pods", "replicaset.apps/web", fleet.NotInjected, 3, 1, false},
		{"a current Pod is listed", "pod/web-a", fleet.Current, 0, 0, true},
		{"an outdated Pod is listed", "pod/web-c", fleet.Outdated, 0, 0, true},
		{"a conflict is an error row", "deployment.apps/clash", "error:conflict", 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := got[c.ref]
			if !ok {
				t.Fatalf("no row %s among %v", c.ref, rows)
			}
			if r.State != c.state || r.Pods != c.pods || r.PodsBehind != c.behind || r.Admission != c.admission {
				t.Errorf("%+v, want state %s, pods %d, behind %d, admission %v", r, c.state, c.pods, c.behind, c.admission)
			}
			if r.Failed() != strings.HasPrefix(c.state, "error:") {
				t.Errorf("Failed() = %v for state %s", r.Failed(), r.State)
			}
		})
	}
}
