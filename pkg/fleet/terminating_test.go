package fleet_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// terminating marks o as being deleted, as the API server does while its
// grace period or a finalizer holds it.
func terminating(o *unstructured.Unstructured) *unstructured.Unstructured {
	o.Object["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-04T21:00:00Z"
	return o
}

// TestBuildTerminating: a terminating Pod is counted neither current nor
// behind, whatever it runs, but apart, in PodsTerminating: the old Pod a
// rollout leaves to run out its grace period does not make the workload
// need a restart. A terminating Pod injected at admission is not listed by
// itself; a terminating bare Pod is, marked, and needs no attention.
func TestBuildTerminating(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	web := injected(t, in, strings.ReplaceAll(deploy, "NAME", "web"))
	rs := object(t, `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-2
  namespace: ns
  uid: uid-rs
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: uid-web, controller: true}]
spec: {template: {spec: {containers: [{name: app, image: nginx}]}}}
`)
	podOfRS := func(name string, template *unstructured.Unstructured) *unstructured.Unstructured {
		meta, _, _ := unstructured.NestedMap(template.Object, "spec", "template", "metadata")
		spec, _, _ := unstructured.NestedMap(template.Object, "spec", "template", "spec")
		meta["name"], meta["namespace"] = name, "ns"
		meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-2", "uid": "uid-rs", "controller": true}}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}}
	}
	plain := object(t, strings.ReplaceAll(deploy, "NAME", "web"))
	current := podOfRS("web-2-a", web.DeepCopy())
	oldGoing := terminating(podOfRS("web-1-a", plain))
	currentGoing := terminating(podOfRS("web-2-b", web.DeepCopy()))
	bare := terminating(object(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: ns}\nspec: {containers: [{name: app, image: nginx}]}\n"))

	rows := fleet.Build(in, []*unstructured.Unstructured{web, rs, current, oldGoing, currentGoing, bare})
	got := map[string]fleet.Row{}
	for _, r := range rows {
		got[r.Ref()] = r
	}
	for _, c := range []struct {
		name, ref                 string
		pods, behind, terminating int
		rowTerminating, attention bool
	}{
		{"the workload counts its terminating Pods apart", "deployment.apps/web", 1, 0, 2, false, false},
		{"a terminating bare Pod is marked", "pod/bare", 0, 0, 0, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ok := got[c.ref]
			if !ok {
				t.Fatalf("no row %s among %+v", c.ref, rows)
			}
			if r.Pods != c.pods || r.PodsBehind != c.behind || r.PodsTerminating != c.terminating || r.Terminating != c.rowTerminating || r.NeedsAttention() != c.attention {
				t.Errorf("%+v\nwant pods %d, behind %d, terminating %d, marked %v, needs attention %v", r, c.pods, c.behind, c.terminating, c.rowTerminating, c.attention)
			}
		})
	}
	if len(rows) != 2 {
		t.Errorf("%d rows, want the workload and the bare Pod: %+v", len(rows), rows)
	}
}

// TestBuildTerminatingAdmission: a terminating Pod injected at admission
// with an outdated template is not behind, and not listed by itself.
func TestBuildTerminatingAdmission(t *testing.T) {
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
	rs := object(t, "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: ns, uid: uid-rs}\nspec: {template: {spec: {containers: [{name: app, image: nginx}]}}}\n")
	pod := func(name string, by *inject.Injector) *unstructured.Unstructured {
		return injected(t, by, `apiVersion: v1
kind: Pod
metadata:
  name: `+name+`
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-rs, controller: true}]
spec: {containers: [{name: app, image: nginx}]}
`)
	}
	rows := fleet.Build(in, []*unstructured.Unstructured{rs, pod("web-a", in), terminating(pod("web-old", old))})
	var refs []string
	for _, r := range rows {
		refs = append(refs, r.Ref())
	}
	if strings.Join(refs, " ") != "replicaset.apps/web pod/web-a" {
		t.Fatalf("rows %v, want the ReplicaSet and its Pod that is not terminating", refs)
	}
	if r := rows[0]; r.Pods != 1 || r.PodsBehind != 0 || r.PodsTerminating != 1 || r.NeedsAttention() {
		t.Errorf("replicaset.apps/web: %+v\nwant 1 Pod, none behind, 1 terminating", r)
	}
}
