package cmd

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/reason"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// statefulSet is the OnDelete StatefulSet db of 2 replicas, at revision
// db-2, whose status counts ready Pods Ready and updated updated.
func statefulSet(t *testing.T, ready, updated int) *unstructured.Unstructured {
	return decode(t, fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ns, uid: sts-db, generation: 1}
spec:
  replicas: 2
  updateStrategy: {type: OnDelete}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: app, image: "app:1"}]}
status: {observedGeneration: 1, replicas: 2, readyReplicas: %d, updatedReplicas: %d, currentRevision: db-1, updateRevision: db-2}
`, ready, updated))
}

// dbPod is a Ready Pod of db at revision.
func dbPod(t *testing.T, name, uid, revision string) *unstructured.Unstructured {
	return podOf(t, nil, name, uid, "StatefulSet/sts-db", "controller-revision-hash: "+revision, true)
}

// controller plays the controller of an OnDelete workload on the fake
// cluster: it answers each DELETE of a Pod with replace (the Pod deleted
// and what comes back, as the tracker holds them), and records the
// names deleted.
type controller struct {
	mu      sync.Mutex
	deleted []string
}

func (c *controller) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deleted...)
}

func (c *controller) on(client *dynamicfake.FakeDynamicClient, replace func(name string, n int) error) {
	client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		c.mu.Lock()
		c.deleted = append(c.deleted, a.(k8stesting.DeleteAction).GetName())
		n := len(c.deleted)
		c.mu.Unlock()
		return true, nil, replace(a.(k8stesting.DeleteAction).GetName(), n)
	})
}

// replaceWith deletes the Pod and creates pod in its place; count has
// the StatefulSet's status count it as updated.
func replaceWith(client *dynamicfake.FakeDynamicClient, name string, pod *unstructured.Unstructured, count bool) error {
	tr := client.Tracker()
	if err := tr.Delete(podsResource, "ns", name); err != nil {
		return err
	}
	if pod != nil {
		if err := tr.Create(podsResource, pod, "ns"); err != nil {
			return err
		}
	}
	if !count {
		return nil
	}
	return countUpdated(tr, "db")
}

// countUpdated has StatefulSet name's controller count one more Pod as
// updated.
func countUpdated(tr k8stesting.ObjectTracker, name string) error {
	stored, err := tr.Get(statefulSetsResource, "ns", name)
	if err != nil {
		return err
	}
	sts := stored.(*unstructured.Unstructured).DeepCopy()
	updated, _, _ := unstructured.NestedInt64(sts.Object, "status", "updatedReplicas")
	_ = unstructured.SetNestedField(sts.Object, updated+1, "status", "updatedReplicas")
	return tr.Update(statefulSetsResource, sts, "ns")
}

var deleteDB = rollout.Step{Namespace: "ns", Kind: "StatefulSet", Group: "apps", Name: "db", Action: rollout.DeletePods}

// TestDeletePods: the Pods behind are deleted one at a time, highest
// ordinal first, each replacement waited on until Ready, and the step
// ends once the StatefulSet's status counts them; a status that never
// does is waited on until the run stops.
func TestDeletePods(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		count bool
		want  string // the Failure's text, "" for none
	}{
		{"counted", true, ""},
		{"never counted", false, "stopped waiting (0 of 2 Pods counted as updated by the StatefulSet)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, client := recreateMover(t, statefulSet(t, 2, 0), dbPod(t, "db-0", "uid-0", "db-1"), dbPod(t, "db-1", "uid-1", "db-1"))
			var c controller
			c.on(client, func(name string, n int) error {
				return replaceWith(client, name, dbPod(t, name, fmt.Sprintf("uid-new-%d", n), "db-2"), tc.count)
			})
			ctx := bounded(t, 10*time.Second)
			if !tc.count {
				// past a second: the wait for the status wakes without a
				// change at least once before the run stops
				ctx = bounded(t, 2*time.Second)
			}
			err := m.Move(ctx, deleteDB)
			if tc.want == "" && err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				failure(t, err, rollout.ReasonInterrupted, tc.want)
			}
			if got := c.names(); len(got) != 2 || got[0] != "db-1" || got[1] != "db-0" {
				t.Errorf("deleted %v, want [db-1 db-0]", got)
			}
		})
	}
}

// TestDeletePodsGoing: a Pod behind that is already terminating (a
// ReplicaSet has replaced it at once) is waited on until it is gone, not
// deleted again, for as long as the run goes on; the Pods behind are
// deleted after it.
func TestDeletePodsGoing(t *testing.T) {
	t.Parallel()
	old, current := testInjector(t, "envoy:a"), testInjector(t, "envoy:b")
	going := podOf(t, old, "web-x-1", "uid-x-1", "ReplicaSet/rs-web-x", "", false)
	ts := metav1.NewTime(time.Unix(1_000_000, 0))
	going.SetDeletionTimestamp(&ts)
	serving := podOf(t, current, "web-x-2", "uid-x-2", "ReplicaSet/rs-web-x", "", true)
	m, client := recreateMover(t, webX(t, 2), going, serving, podOf(t, old, "web-x-3", "uid-x-3", "ReplicaSet/rs-web-x", "", true))
	var c controller
	c.on(client, func(name string, _ int) error {
		if err := replaceWith(client, name, podOf(t, current, "web-x-4", "uid-x-4", "ReplicaSet/rs-web-x", "", true), false); err != nil {
			return err
		}
		rs := webX(t, 2)
		rs.SetResourceVersion("8") // its status counts the replacement
		return client.Tracker().Update(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, rs, "ns")
	})
	// the terminating Pod ends once the restart waits for it to go (its
	// second reading of the clock)
	readings := 0
	fixed := m.now
	m.now = func() time.Time {
		if readings++; readings == 2 {
			if err := client.Tracker().Delete(podsResource, "ns", "web-x-1"); err != nil {
				t.Error(err)
			}
		}
		return fixed()
	}
	if err := m.Move(bounded(t, 10*time.Second), webXStep); err != nil {
		t.Fatal(err)
	}
	// Fatal: what follows would wait forever on a restart that gives up
	// waiting for a Pod to go and deletes nothing after it
	if got := c.names(); len(got) != 1 || got[0] != "web-x-3" {
		t.Fatalf("deleted %v, want [web-x-3]", got)
	}
	if readings < 2 {
		t.Errorf("the clock was read %d times: the terminating Pod was not waited on", readings)
	}

	// one that never goes is waited on until the run stops
	m, _ = recreateMover(t, webX(t, 1), going, serving)
	err := m.Move(cancelled(), webXStep)
	failure(t, err, rollout.ReasonInterrupted, "stopped waiting (waiting for the deleted Pod to go)")
}

// webX is the ReplicaSet web-x of replicas, all Ready, without a
// Deployment.
func webX(t *testing.T, replicas int) *unstructured.Unstructured {
	return decode(t, fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-x, namespace: ns, uid: rs-web-x, generation: 1, resourceVersion: "7"}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "app:1"}]}
status: {observedGeneration: 1, replicas: %d, readyReplicas: %d}
`, replicas, replicas, replicas))
}

var webXStep = rollout.Step{Namespace: "ns", Kind: "ReplicaSet", Group: "apps", Name: "web-x", Action: rollout.DeletePods}

// TestDeletePodsFails: a replacement still behind fails the step rather
// than looping, whether it comes back under the same name (a StatefulSet)
// or a new one (a ReplicaSet, stopped once it deleted more Pods than it
// has); a refused DELETE, a workload deleted meanwhile, a Pod that never
// goes or never comes back fail it too.
func TestDeletePodsFails(t *testing.T) {
	t.Parallel()
	old := testInjector(t, "envoy:a")
	rs := webX(t, 1)
	sts := func() []runtime.Object {
		return []runtime.Object{statefulSet(t, 2, 0), dbPod(t, "db-0", "uid-0", "db-1"), dbPod(t, "db-1", "uid-1", "db-1")}
	}
	for _, tc := range []struct {
		name    string
		objs    []runtime.Object
		step    rollout.Step
		replace func(client *dynamicfake.FakeDynamicClient, name string, n int) error
		timeout time.Duration
		deleted []string
		reason  reason.Code
		want    string
	}{
		{"the same name, still behind", sts(), deleteDB, func(client *dynamicfake.FakeDynamicClient, name string, n int) error {
			return replaceWith(client, name, dbPod(t, name, fmt.Sprintf("uid-new-%d", n), "db-1"), true)
		}, 10 * time.Second, []string{"db-1"},
			rollout.ReasonInjection, "the replacement of Pod db-1 still runs an outdated sidecar (is injection at admission enabled in namespace ns?)"},
		{"new names, still behind", []runtime.Object{rs, podOf(t, old, "web-x-1", "uid-x-1", "ReplicaSet/rs-web-x", "", true)},
			webXStep,
			func(client *dynamicfake.FakeDynamicClient, name string, n int) error {
				next := fmt.Sprintf("web-x-%d", n+1)
				return replaceWith(client, name, podOf(t, old, next, "uid-"+next, "ReplicaSet/rs-web-x", "", true), false)
			}, 10 * time.Second, []string{"web-x-1", "web-x-2"},
			rollout.ReasonInjection, "the replacement of Pod web-x-3 still runs an outdated sidecar (is injection at admission enabled in namespace ns?)"},
		{"DELETE refused", sts(), deleteDB, func(*dynamicfake.FakeDynamicClient, string, int) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "db-1", errors.New("no delete"))
		}, 10 * time.Second, []string{"db-1"},
			rollout.ReasonAPI, `deleting Pod db-1: pods "db-1" is forbidden: no delete`},
		{"the workload deleted meanwhile", sts(), deleteDB, func(client *dynamicfake.FakeDynamicClient, name string, _ int) error {
			return client.Tracker().Delete(statefulSetsResource, "ns", "db")
		}, 10 * time.Second, []string{"db-1"},
			rollout.ReasonGone, "the StatefulSet was deleted"},
		{"a Pod that never comes back", sts(), deleteDB, func(client *dynamicfake.FakeDynamicClient, name string, _ int) error {
			return replaceWith(client, name, nil, false)
		}, time.Second, []string{"db-1"},
			rollout.ReasonInterrupted, "stopped waiting (1 of 2 Pods are ready)"},
		{"a workload not there", nil, deleteDB, nil, time.Second, nil,
			rollout.ReasonGone, "the StatefulSet was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, client := recreateMover(t, tc.objs...)
			var c controller
			c.on(client, func(name string, n int) error { return tc.replace(client, name, n) })
			err := m.Move(bounded(t, tc.timeout), tc.step)
			failure(t, err, tc.reason, tc.want)
			if got := c.names(); fmt.Sprint(got) != fmt.Sprint(tc.deleted) {
				t.Errorf("deleted %v, want %v", got, tc.deleted)
			}
		})
	}
}

// TestDeletePodsNeverGoes: a Pod whose deletion never completes (a
// finalizer nobody removes) fails the step at the deadline.
func TestDeletePodsNeverGoes(t *testing.T) {
	t.Parallel()
	m, client := recreateMover(t, statefulSet(t, 2, 0), dbPod(t, "db-0", "uid-0", "db-2"), dbPod(t, "db-1", "uid-1", "db-1"))
	var c controller
	c.on(client, func(string, int) error { return nil }) // accepted, never gone
	pastDeadline(m)
	err := m.Move(bounded(t, 10*time.Second), deleteDB)
	failure(t, err, rollout.ReasonProgressDeadline, "no progress for 10s (waiting for the deleted Pod to go)")
	if got := c.names(); len(got) != 1 {
		t.Errorf("deleted %v, want db-1 once", got)
	}
}

// TestDeletePodsNothingBehind: a workload none of whose Pods is behind
// is left at once, whatever its status counts: the step deleted nothing
// to count.
func TestDeletePodsNothingBehind(t *testing.T) {
	t.Parallel()
	m, _ := recreateMover(t, statefulSet(t, 2, 1), dbPod(t, "db-0", "uid-0", "db-2"), dbPod(t, "db-1", "uid-1", "db-2"))
	if err := m.Move(cancelled(), deleteDB); err != nil {
		t.Error(err)
	}
}

// TestCounted looks once at whether a workload's status counts the
// Pods replaced: a StatefulSet's or DaemonSet's updated Pods, all Ready;
// a ReplicaSet's Ready Pods, once its status changed after the last
// deletion or stayed quiet for longer than statusQuiet (5s).
func TestCounted(t *testing.T) {
	t.Parallel()
	daemonSet := func(updated int) *unstructured.Unstructured {
		return decode(t, fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ns, uid: ds, generation: 1}
spec: {updateStrategy: {type: OnDelete}}
status: {observedGeneration: 1, desiredNumberScheduled: 2, numberAvailable: 2, updatedNumberScheduled: %d}
`, updated))
	}
	replicaSet := func(ready int) *unstructured.Unstructured {
		return decode(t, fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-x, namespace: ns, uid: rs, generation: 1, resourceVersion: "7"}
spec: {replicas: 2}
status: {observedGeneration: 1, replicas: 2, readyReplicas: %d}
`, ready))
	}
	for _, tc := range []struct {
		name     string
		obj      *unstructured.Unstructured
		resource string
		before   string
		quiet    time.Duration // how far the clock moves at each reading
		want     string        // the Failure's text, "" for none
	}{
		{"StatefulSet counted", statefulSet(t, 2, 2), "statefulsets", "", 0, ""},
		{"StatefulSet not yet", statefulSet(t, 2, 1), "statefulsets", "", 0, "stopped waiting (1 of 2 Pods counted as updated by the StatefulSet)"},
		{"StatefulSet not Ready", statefulSet(t, 1, 2), "statefulsets", "", 0, "stopped waiting (2 of 2 Pods counted as updated by the StatefulSet)"},
		{"DaemonSet counted", daemonSet(2), "daemonsets", "", 0, ""},
		{"DaemonSet not yet", daemonSet(1), "daemonsets", "", 0, "stopped waiting (1 of 2 Pods counted as updated by the DaemonSet)"},
		{"ReplicaSet changed", replicaSet(2), "replicasets", "6", 0, ""},
		{"ReplicaSet unchanged", replicaSet(2), "replicasets", "7", 0, "stopped waiting (waiting for the ReplicaSet's status to count the replacement)"},
		{"ReplicaSet quiet past 5s", replicaSet(2), "replicasets", "7", 6 * time.Second, ""},
		{"ReplicaSet quiet for 5s", replicaSet(2), "replicasets", "7", 5 * time.Second, "stopped waiting (waiting for the ReplicaSet's status to count the replacement)"},
		{"ReplicaSet changed, not Ready", replicaSet(1), "replicasets", "6", 0, "stopped waiting (waiting for the ReplicaSet's status to count the replacement)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _, _ := fakeMover(t, tc.obj)
			m.now = (&movingClock{t: time.Unix(1_000_000, 0), step: tc.quiet}).now
			step := rollout.Step{Namespace: "ns", Kind: tc.obj.GetKind(), Name: tc.obj.GetName()}
			err := m.counted(cancelled(), tc.resource, step, tc.before)
			if tc.want == "" {
				if err != nil {
					t.Error(err)
				}
				return
			}
			failure(t, err, rollout.ReasonInterrupted, tc.want)
		})
	}
	m, _, _, _ := fakeMover(t)
	err := m.counted(cancelled(), "statefulsets", deleteDB, "")
	failure(t, err, rollout.ReasonGone, "the StatefulSet was deleted")
}

// TestStatusReady: a ReplicaSet or ReplicationController is ready when
// its status counts every replica Ready; other kinds when their rollout
// is done.
func TestStatusReady(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		manifest string
		want     bool
	}{
		{`{kind: ReplicaSet, spec: {replicas: 2}, status: {readyReplicas: 2}}`, true},
		{`{kind: ReplicaSet, spec: {replicas: 2}, status: {readyReplicas: 1}}`, false},
		{`{kind: ReplicationController, spec: {replicas: 2}, status: {readyReplicas: 2}}`, true},
		{`{kind: ReplicationController, spec: {replicas: 2}, status: {readyReplicas: 1}}`, false},
		{`{kind: Deployment, metadata: {generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2}}`, true},
		{`{kind: Deployment, metadata: {generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 1}}`, false},
	} {
		if got := statusReady(decode(t, tc.manifest)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.manifest, got, tc.want)
		}
	}
}

// TestSettle looks once at whether a workload has settled: at the
// generation waited for, the Pod deleted gone, every Pod it wants Ready,
// and its status saying so.
func TestSettle(t *testing.T) {
	t.Parallel()
	notReady := dbPod(t, "db-1", "uid-1", "db-2")
	setReady(notReady, false)
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		gen  int64
		gone string
		want string // the Failure's text, "" for settled
	}{
		{"settled", []runtime.Object{statefulSet(t, 2, 2), dbPod(t, "db-0", "uid-0", "db-2"), dbPod(t, "db-1", "uid-1", "db-2")}, 1, "uid-9", ""},
		{"the deleted Pod still there", []runtime.Object{statefulSet(t, 2, 2), dbPod(t, "db-0", "uid-0", "db-2"), dbPod(t, "db-1", "uid-1", "db-2")}, 1, "uid-1",
			"stopped waiting (waiting for the deleted Pod to go)"},
		{"a Pod not Ready", []runtime.Object{statefulSet(t, 2, 2), dbPod(t, "db-0", "uid-0", "db-2"), notReady}, 1, "",
			"stopped waiting (1 of 2 Pods are ready)"},
		{"an earlier generation", []runtime.Object{statefulSet(t, 2, 2), dbPod(t, "db-0", "uid-0", "db-2"), dbPod(t, "db-1", "uid-1", "db-2")}, 2, "uid-1",
			"stopped waiting (waiting for the injected template)"},
		{"a status not Ready", []runtime.Object{statefulSet(t, 1, 2), dbPod(t, "db-0", "uid-0", "db-2"), dbPod(t, "db-1", "uid-1", "db-2")}, 1, "",
			"stopped waiting (2 of 2 Pods are ready)"},
		{"gone", nil, 1, "", "the StatefulSet was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _, _ := fakeMover(t, tc.objs...)
			obj, err := m.settle(cancelled(), "statefulsets", deleteDB, tc.gen, types.UID(tc.gone))
			switch {
			case tc.want == "" && (err != nil || obj == nil || obj.GetName() != "db"):
				t.Errorf("%v, %v; want db settled", obj, err)
			case tc.want != "" && obj != nil:
				t.Errorf("returned %s, want none", obj.GetName())
			}
			if tc.want != "" {
				reason := rollout.ReasonInterrupted
				if tc.name == "gone" {
					reason = rollout.ReasonGone
				}
				failure(t, err, reason, tc.want)
			}
		})
	}
}

// TestByOrdinal: Pods behind are deleted highest ordinal first, as a
// StatefulSet rolls, by number (db-10 before db-9), and Pods without an
// ordinal by name.
func TestByOrdinal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ names, want []string }{
		{[]string{"db-2", "db-10", "db-0", "db-9", "db-1"}, []string{"db-10", "db-9", "db-2", "db-1", "db-0"}},
		{[]string{"web-x-b2c", "web-x-a1d", "web-x-c3e"}, []string{"web-x-c3e", "web-x-b2c", "web-x-a1d"}},
	} {
		pods := make([]*unstructured.Unstructured, len(tc.names))
		for i, name := range tc.names {
			pods[i] = &unstructured.Unstructured{}
			pods[i].SetName(name)
		}
		var got []string
		for len(pods) > 0 {
			top := slices.MaxFunc(pods, byOrdinal)
			got = append(got, top.GetName())
			pods = slices.DeleteFunc(pods, func(p *unstructured.Unstructured) bool { return p == top })
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: deleted in the order %v, want %v", tc.names, got, tc.want)
		}
	}
}
