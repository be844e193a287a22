package fleet_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestSort: rows go by rank (outdated, Pods behind, errors, not injected,
// skipped, current), then by namespace, kind and name; rows equal in all
// of these keep their order.
func TestSort(t *testing.T) {
	row := func(ns, kind, name, state string, behind int, msg string) fleet.Row {
		return fleet.Row{Namespace: ns, Kind: kind, Name: name, State: state, PodsBehind: behind, Message: msg}
	}
	rows := []fleet.Row{
		row("b", "Deployment", "z", fleet.Current, 0, ""),
		row("a", "Deployment", "x", fleet.Current, 0, "first"),
		row("a", "Deployment", "a", "skipped:host_network", 0, ""),
		row("a", "StatefulSet", "a", fleet.NotInjected, 0, ""),
		row("a", "Deployment", "y", fleet.Current, 0, ""),
		row("a", "Deployment", "a", "error:conflict", 0, ""),
		row("a", "Deployment", "x", fleet.Current, 0, "second"),
		row("a", "Deployment", "b", fleet.Current, 2, ""),
		row("a", "DaemonSet", "z", fleet.Current, 0, ""),
		row("b", "Deployment", "a", fleet.Outdated, 0, ""),
		row("a", "Deployment", "w", fleet.Current, 0, ""),
	}
	fleet.Sort(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Namespace+"/"+r.Kind+"/"+r.Name+" "+r.State+" "+r.Message)
	}
	want := []string{
		"b/Deployment/a outdated ",
		"a/Deployment/b current ", // Pods behind
		"a/Deployment/a error:conflict ",
		"a/StatefulSet/a not-injected ",
		"a/Deployment/a skipped:host_network ",
		"a/DaemonSet/z current ",
		"a/Deployment/w current ",
		"a/Deployment/x current first",
		"a/Deployment/x current second",
		"a/Deployment/y current ",
		"b/Deployment/z current ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sorted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRestartHints: the hint for a workload whose Pods are behind names
// the command that recreates them, by kind and update strategy, with the
// profile reported on; a workload with no Pod behind has none.
func TestRestartHints(t *testing.T) {
	in, oldIn := defaultInjector(t), olderInjector(t)
	// rolling is a workload of kind injected by in, with one Pod made
	// from a template without the record: behind.
	rolling := func(kind string) []*unstructured.Unstructured {
		w := injected(t, in, strings.ReplaceAll(strings.ReplaceAll(deploy, "NAME", "web"), "kind: Deployment", "kind: "+kind))
		p := pod(t, "web-a", "web", nil)
		yes := true
		p.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "web", UID: "uid-web", Controller: &yes}})
		return []*unstructured.Unstructured{w, p}
	}
	for _, c := range []struct {
		name string
		objs []*unstructured.Unstructured
		in   *inject.Injector
		want string
	}{
		{"a Deployment", rolling("Deployment"), in, "kubectl rollout restart deployment.apps/web -n ns"},
		{"a StatefulSet", rolling("StatefulSet"), in, "kubectl rollout restart statefulset.apps/web -n ns"},
		{"a DaemonSet", rolling("DaemonSet"), in, "kubectl rollout restart daemonset.apps/web -n ns"},
		{"a ReplicaSet of its own, Pods injected at admission", func() []*unstructured.Unstructured {
			rs := object(t, "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: ns, uid: uid-rs}\nspec: {template: {spec: {containers: [{name: app, image: nginx}]}}}\n")
			p := injected(t, oldIn, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-a\n  namespace: ns\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-rs, controller: true}]\nspec: {containers: [{name: app, image: nginx}]}\n")
			return []*unstructured.Unstructured{rs, p}
		}(), in, "delete the Pods of replicaset.apps/web in ns; its controller creates them again"},
		{"an OnDelete StatefulSet on a profile", func() []*unstructured.Unstructured {
			logs := logAgent(t, "logs")
			set := injected(t, logs, strings.ReplaceAll(onDeleteSet, "KIND", "StatefulSet"))
			return []*unstructured.Unstructured{set, podOf(t, "StatefulSet", "db-0", "db-old", set.DeepCopy())}
		}(), logAgent(t, "logs"), "kubectl inject restart statefulset.apps/db -n ns --profile logs"},
		{"an OnDelete DaemonSet on the default profile", func() []*unstructured.Unstructured {
			set := injected(t, in, strings.ReplaceAll(onDeleteSet, "KIND", "DaemonSet"))
			return []*unstructured.Unstructured{set, podOf(t, "DaemonSet", "db-0", "2", set.DeepCopy())}
		}(), in, "kubectl inject restart daemonset.apps/db -n ns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := fleet.Build(c.in, c.objs)
			var w *fleet.Row
			for i := range rows {
				if rows[i].Kind != "Pod" {
					w = &rows[i]
				}
			}
			if w == nil || w.PodsBehind != 1 || w.Restart != c.want {
				t.Errorf("rows %+v\nwant one Pod behind and the hint %q", rows, c.want)
			}
		})
	}
	t.Run("no Pod behind, no hint", func(t *testing.T) {
		w := injected(t, in, strings.ReplaceAll(deploy, "NAME", "web"))
		tpl, _, _ := unstructured.NestedStringMap(w.Object, "spec", "template", "metadata", "annotations")
		rows := fleet.Build(in, []*unstructured.Unstructured{w, pod(t, "web-a", "web", tpl)})
		if len(rows) != 1 || rows[0].Pods != 1 || rows[0].PodsBehind != 0 || rows[0].Restart != "" {
			t.Errorf("rows %+v\nwant one Pod, none behind, no restart hint", rows)
		}
	})
}

// TestBuildSkipped: an object the core leaves alone is a skipped row,
// with its reason in the state and the core's message.
func TestBuildSkipped(t *testing.T) {
	in := defaultInjector(t)
	host := object(t, strings.Replace(strings.ReplaceAll(deploy, "NAME", "host"), "containers:", "hostNetwork: true\n      containers:", 1))
	rows := fleet.Build(in, []*unstructured.Unstructured{host})
	if len(rows) != 1 {
		t.Fatalf("rows %+v, want one", rows)
	}
	r := rows[0]
	if r.State != "skipped:host_network" || r.Message != "the pod uses the host's network; a sidecar would share the node's ports" || r.NeedsAttention() || r.Failed() {
		t.Errorf("%+v\nwant state skipped:host_network with the core's message", r)
	}
}

// TestPodBehind: a Pod of a workload whose template holds a record is
// behind when it runs another record (none included); a Pod of a workload
// whose template has none (injected at admission) is behind only when
// its own record is outdated, not when it has none.
func TestPodBehind(t *testing.T) {
	in, oldIn := defaultInjector(t), olderInjector(t)
	web := injected(t, in, strings.ReplaceAll(deploy, "NAME", "web"))
	tpl, _, _ := unstructured.NestedStringMap(web.Object, "spec", "template", "metadata", "annotations")
	rs := object(t, "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: ns, uid: uid-rs}\nspec: {template: {spec: {containers: [{name: app, image: nginx}]}}}\n")
	rsPod := func(by *inject.Injector) *unstructured.Unstructured {
		manifest := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-a\n  namespace: ns\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: uid-rs, controller: true}]\nspec: {containers: [{name: app, image: nginx}]}\n"
		if by == nil {
			return object(t, manifest)
		}
		return injected(t, by, manifest)
	}
	for _, c := range []struct {
		name          string
		workload, pod *unstructured.Unstructured
		want          bool
	}{
		{"the workload's record", web, pod(t, "web-a", "web", tpl), false},
		{"no record under a recorded template", web, pod(t, "web-a", "web", nil), true},
		{"injected at admission, current", rs, rsPod(in), false},
		{"injected at admission, outdated", rs, rsPod(oldIn), true},
		{"not injected, under a template without a record", rs, rsPod(nil), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fleet.PodBehind(in, c.workload, c.pod); got != c.want {
				t.Errorf("PodBehind = %v, want %v", got, c.want)
			}
		})
	}
}

// TestRevisionLabel: the label and value a StatefulSet's or DaemonSet's
// controller gives the Pods of its current template, whatever the update
// strategy; none for other kinds or before the controller said; and
// OlderRevision tells a Pod labelled with another value.
func TestRevisionLabel(t *testing.T) {
	sts := object(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: ns, uid: uid-db}\nstatus: {updateRevision: db-new}\n")
	ds := object(t, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: db, namespace: ns, uid: uid-db, annotations: {deprecated.daemonset.template.generation: \"3\"}}\n")
	fresh := object(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: ns, uid: uid-db}\n")
	dep := object(t, strings.ReplaceAll(deploy, "NAME", "web"))
	labelled := func(k, v string) *unstructured.Unstructured {
		p := object(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: db-0, namespace: ns}\n")
		p.SetLabels(map[string]string{k: v})
		return p
	}
	for _, c := range []struct {
		name         string
		workload     *unstructured.Unstructured
		label, value string
		ok           bool
	}{
		{"a StatefulSet", sts, "controller-revision-hash", "db-new", true},
		{"a DaemonSet", ds, "pod-template-generation", "3", true},
		{"a StatefulSet its controller has not seen", fresh, "", "", false},
		{"a Deployment", dep, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			label, value, ok := fleet.RevisionLabel(c.workload)
			if label != c.label || value != c.value || ok != c.ok {
				t.Errorf("RevisionLabel = %q, %q, %v; want %q, %q, %v", label, value, ok, c.label, c.value, c.ok)
			}
		})
	}
	for _, c := range []struct {
		name          string
		workload, pod *unstructured.Unstructured
		want          bool
	}{
		{"a StatefulSet's Pod of the update revision", sts, labelled("controller-revision-hash", "db-new"), false},
		{"a StatefulSet's Pod of an older revision", sts, labelled("controller-revision-hash", "db-old"), true},
		{"a Pod without the label", sts, labelled("app", "db"), false},
		{"a DaemonSet's Pod of an older generation", ds, labelled("pod-template-generation", "2"), true},
		{"before the controller said", fresh, labelled("controller-revision-hash", "db-old"), false},
		{"a Deployment", dep, labelled("controller-revision-hash", "db-old"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fleet.OlderRevision(c.workload, c.pod); got != c.want {
				t.Errorf("OlderRevision = %v, want %v", got, c.want)
			}
		})
	}
}

// olderInjector injects an older template (another Envoy image): what a
// Pod made before the current template runs.
func olderInjector(t *testing.T) *inject.Injector {
	t.Helper()
	old, err := inject.ParseTemplate([]byte("containers:\n- name: envoy\n  image: envoyproxy/envoy:v1.30.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	oldIn, err := inject.New(old, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return oldIn
}
