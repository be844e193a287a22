package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/reason"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// The recreate path of restart (restartMover.Move and the waits behind
// it) on a fake cluster. A test that only looks once cancels its context
// first: a wait returns at its first look, or says what it waits for.

var (
	deploymentsResource  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	statefulSetsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
)

// movingClock moves on by step at every reading: a wait that reads it
// twice sees its deadline pass at once.
type movingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *movingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// pastDeadline makes each reading of m's clock lie further past the one
// before than m's deadline.
func pastDeadline(m *restartMover) {
	m.now = (&movingClock{t: time.Unix(1_000_000, 0), step: m.deadline + time.Second}).now
}

// testInjector is the default template with image.
func testInjector(t *testing.T, image string) *inject.Injector {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// recreateMover is fakeMover injecting the default template with image
// envoy:b.
func recreateMover(t *testing.T, objs ...runtime.Object) (*restartMover, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	m, client, _, _ := fakeMover(t, objs...)
	m.injector = testInjector(t, "envoy:b")
	m.patcher = &live.Patcher{Injector: m.injector, Op: inject.OpInject, Client: client, FieldManager: "test"}
	return m, client
}

// podOf is a Pod of namespace ns, injected by in (nil: not injected),
// controlled by owner (KIND/UID, "" for none), with labels (a flow map's
// inside), Ready or not.
func podOf(t *testing.T, in *inject.Injector, name, uid, owner, labels string, ready bool) *unstructured.Unstructured {
	t.Helper()
	refs := ""
	if kind, ownerUID, ok := strings.Cut(owner, "/"); ok {
		refs = fmt.Sprintf(", ownerReferences: [{apiVersion: apps/v1, kind: %s, name: owner, uid: %s, controller: true}]", kind, ownerUID)
	}
	node, err := kyaml.Parse(fmt.Sprintf(`{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: ns, uid: %s, labels: {%s}%s},
  spec: {containers: [{name: app, image: "app:1", ports: [{containerPort: 8080}]}]}}`, name, uid, labels, refs))
	if err != nil {
		t.Fatal(err)
	}
	if in != nil {
		if e := in.ProcessNode(inject.OpInject, node, 0); len(e) != 1 || e[0].Action != inject.Injected {
			t.Fatalf("injecting %s: %+v", name, e)
		}
	}
	data, err := node.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	pod := &unstructured.Unstructured{}
	if err := pod.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	setReady(pod, ready)
	return pod
}

func setReady(pod *unstructured.Unstructured, ready bool) {
	status := map[bool]string{true: "True", false: "False"}[ready]
	_ = unstructured.SetNestedSlice(pod.Object, []any{map[string]any{"type": "Ready", "status": status}}, "status", "conditions")
}

// deployment is Deployment web of generation gen whose controller has
// observed observed and updated updated of its 3 replicas, all available.
func deployment(t *testing.T, gen, observed, updated int) *unstructured.Unstructured {
	return decode(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns, uid: dep-web, generation: %d}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "app:1"}]}
status: {observedGeneration: %d, replicas: 3, updatedReplicas: %d, availableReplicas: %d}
`, gen, observed, updated, updated))
}

// answerPatches makes the fake API server answer each PATCH of gvr with
// the stored object as edit changes it, stored (the fake client cannot
// apply a strategic merge patch to an unstructured object), and returns
// the patches sent.
func answerPatches(t *testing.T, client *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, edit func(*unstructured.Unstructured)) func() []k8stesting.PatchAction {
	var mu sync.Mutex
	var sent []k8stesting.PatchAction
	client.PrependReactor("patch", gvr.Resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		mu.Lock()
		sent = append(sent, p)
		mu.Unlock()
		stored, err := client.Tracker().Get(gvr, p.GetNamespace(), p.GetName())
		if err != nil {
			return true, nil, err
		}
		obj := stored.(*unstructured.Unstructured).DeepCopy()
		edit(obj)
		if err := client.Tracker().Update(gvr, obj, p.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	})
	return func() []k8stesting.PatchAction {
		mu.Lock()
		defer mu.Unlock()
		return append([]k8stesting.PatchAction(nil), sent...)
	}
}

// failure asserts err is a rollout.Failure of code whose text is want.
func failure(t *testing.T, err error, code reason.Code, want string) {
	t.Helper()
	var f *rollout.Failure
	if !errors.As(err, &f) || f.Reason != code || err.Error() != want {
		t.Errorf("error %v\nwant %s: %s", err, code, want)
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// bounded is a context that ends a wait a broken test would never end.
func bounded(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestMoveRestart: a restart is one strategic merge PATCH of the
// restartedAt annotation, stamped with the clock, by restart's field
// manager; the step ends when the generation it made has rolled out.
func TestMoveRestart(t *testing.T) {
	t.Parallel()
	m, client, clock, _ := fakeMover(t, deployment(t, 1, 1, 3))
	sent := answerPatches(t, client, deploymentsResource, func(d *unstructured.Unstructured) {
		d.SetGeneration(2)
		_ = unstructured.SetNestedField(d.Object, int64(2), "status", "observedGeneration")
	})
	if err := m.Move(bounded(t, 10*time.Second), rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web", Action: rollout.Restart}); err != nil {
		t.Fatal(err)
	}
	p := sent()
	if len(p) != 1 {
		t.Fatalf("%d PATCHes, want 1", len(p))
	}
	want := `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"` + clock.now().Format(time.RFC3339) + `"}}}}}`
	if string(p[0].GetPatch()) != want || p[0].GetPatchType() != types.StrategicMergePatchType || p[0].(k8stesting.PatchActionImpl).PatchOptions.FieldManager != "test" {
		t.Errorf("PATCH %s %s by %q\nwant %s %s by test", p[0].GetPatchType(), p[0].GetPatch(), p[0].(k8stesting.PatchActionImpl).PatchOptions.FieldManager, types.StrategicMergePatchType, want)
	}
}

// TestMoveRestartWaitsForItsGeneration: until the cache holds the
// generation the restart made, the rollout it saw done is not judged,
// however often the wait wakes (here once, after a second without a
// change).
func TestMoveRestartWaitsForItsGeneration(t *testing.T) {
	t.Parallel()
	m, client, _, _ := fakeMover(t, deployment(t, 1, 1, 3))
	client.PrependReactor("patch", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, deployment(t, 2, 1, 3), nil // answered, never seen by the cache
	})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := m.Move(ctx, rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web", Action: rollout.Restart})
	failure(t, err, rollout.ReasonInterrupted, "stopped waiting ()")
}

// TestMoveRestartFails: a refused PATCH fails the step with the API's
// error, and nothing is waited on.
func TestMoveRestartFails(t *testing.T) {
	t.Parallel()
	m, client, _, _ := fakeMover(t, deployment(t, 1, 1, 3))
	client.PrependReactor("patch", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("the object has been modified"))
	})
	err := m.Move(cancelled(), rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web", Action: rollout.Restart})
	failure(t, err, rollout.ReasonAPI, `restarting: Operation cannot be fulfilled on deployments.apps "web": the object has been modified`)
	if !apierrors.IsConflict(err) {
		t.Errorf("error %v does not wrap the conflict", err)
	}
}

// TestMoveReinject: a workload injected through its template is patched
// with the current template once, and waited on until the generation the
// patch made rolls out; a CronJob, which rolls nothing, is not waited on.
func TestMoveReinject(t *testing.T) {
	t.Parallel()
	m, client := recreateMover(t, deployment(t, 1, 1, 3))
	sent := answerPatches(t, client, deploymentsResource, func(d *unstructured.Unstructured) {
		d.SetGeneration(2)
		_ = unstructured.SetNestedField(d.Object, true, "spec", "paused")
		_ = unstructured.SetNestedField(d.Object, int64(2), "status", "observedGeneration")
	})
	// paused: the wait that follows the injection says so
	err := m.Move(bounded(t, 10*time.Second), rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web", Action: rollout.Reinject})
	failure(t, err, rollout.ReasonPaused, "the Deployment is paused (kubectl rollout resume)")
	if p := sent(); len(p) != 1 || !strings.Contains(string(p[0].GetPatch()), `"envoy:b"`) {
		t.Errorf("PATCHes %v, want one with the current template", p)
	}

	cron := decode(t, `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ns, uid: cj, generation: 1}
spec:
  schedule: "0 0 * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: app, image: "app:1"}]}}}}
`)
	m, client = recreateMover(t, cron)
	client.PrependReactor("patch", "cronjobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		out := cron.DeepCopy()
		out.SetGeneration(2) // a generation the cache never holds: a wait would not end
		return true, out, nil
	})
	if err := m.Move(cancelled(), rollout.Step{Namespace: "ns", Kind: "CronJob", Name: "nightly", Action: rollout.Reinject}); err != nil {
		t.Errorf("CronJob: %v", err)
	}
}

// TestMoveReinjectFails: an injection that fails (the object cannot be
// read, or keeps changing) fails the step before anything is waited on
// or deleted, whatever the action that injects first.
func TestMoveReinjectFails(t *testing.T) {
	t.Parallel()
	unavailable := apierrors.NewServiceUnavailable("the server is shutting down")
	for _, tc := range []struct {
		name   string
		step   rollout.Step
		verb   string
		answer error
		want   string
	}{
		{"reinject, GET fails", rollout.Step{Kind: "Deployment", Name: "api", Action: rollout.Reinject}, "get", unavailable,
			"injecting the current template: get: the server is shutting down"},
		{"delete-pods, GET fails", rollout.Step{Kind: "StatefulSet", Name: "db", Action: rollout.DeletePods, Inject: true}, "get", unavailable,
			"injecting the current template: get: the server is shutting down"},
		{"in-place, GET fails", rollout.Step{Kind: "StatefulSet", Name: "db", Action: rollout.InPlace, Inject: true}, "get", unavailable,
			"injecting the current template: get: the server is shutting down"},
		{"recreate, GET fails", rollout.Step{Kind: "Pod", Name: "solo", Action: rollout.Recreate}, "get", unavailable,
			"injecting the current template: get: the server is shutting down"},
		{"reinject, conflicts", rollout.Step{Kind: "Deployment", Name: "web", Action: rollout.Reinject}, "patch",
			apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("the object has been modified")),
			fmt.Sprintf(`injecting the current template: gave up after %d attempts, the object keeps changing: patch: Operation cannot be fulfilled on deployments.apps "web": the object has been modified`, live.DefaultRetries)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// web is there to be read again after a conflict; the others
			// are not in the cache, so the patcher GETs them
			m, client := recreateMover(t, deployment(t, 1, 1, 3))
			client.PrependReactor(tc.verb, "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tc.answer })
			client.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
				t.Errorf("%s after a failed injection", a.GetVerb())
				return true, nil, nil
			})
			tc.step.Namespace = "ns"
			err := m.Move(cancelled(), tc.step)
			failure(t, err, rollout.ReasonInjection, tc.want)
		})
	}
}

// TestMoveOtherActions: Wait only waits; an upgrade in place without
// injection goes straight to the Pods; a step that moves nothing is an
// error.
func TestMoveOtherActions(t *testing.T) {
	t.Parallel()
	m, _ := recreateMover(t, deployment(t, 2, 2, 1))
	err := m.Move(cancelled(), rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web", Action: rollout.Wait})
	failure(t, err, rollout.ReasonInterrupted, "stopped waiting (1 of 3 new Pods have been updated)")

	err = m.Move(cancelled(), rollout.Step{Namespace: "ns", Kind: "Pod", Name: "gone", Action: rollout.InPlace})
	failure(t, err, rollout.ReasonGone, "the Pod was deleted")

	if err := m.Move(cancelled(), rollout.Step{Namespace: "ns", Kind: "Job", Name: "once", Action: rollout.Report}); err == nil || err.Error() != "nothing to do for report" {
		t.Errorf("a report step: %v", err)
	}
}

// TestMoveRecreate: a bare Pod is deleted and created again with the
// current template; the step ends once the Pod created again (its new
// UID) is Ready, and fails at the deadline when it never is.
func TestMoveRecreate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		ready bool // the kubelet makes the new Pod Ready
	}{
		{"Ready again", true},
		{"never Ready", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, client := recreateMover(t, podOf(t, testInjector(t, "envoy:a"), "solo", "uid-1", "", "", true))
			var created sync.WaitGroup
			created.Add(1)
			client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				pod := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
				pod.SetUID("uid-2")
				if err := client.Tracker().Create(podsResource, pod, "ns"); err != nil {
					return true, nil, err
				}
				created.Done()
				return true, pod, nil
			})
			ctx := bounded(t, 10*time.Second)
			if tc.ready {
				// the kubelet: the new Pod turns Ready once it is seen
				go func() {
					created.Wait()
					for ctx.Err() == nil {
						pod := m.cache.get("pods", "ns", "solo")
						if pod != nil && pod.GetUID() == "uid-2" {
							setReady(pod, true)
							if err := client.Tracker().Update(podsResource, pod, "ns"); err != nil {
								t.Error(err)
							}
							return
						}
						time.Sleep(5 * time.Millisecond)
					}
				}()
			} else {
				pastDeadline(m)
			}
			err := m.Move(ctx, rollout.Step{Namespace: "ns", Kind: "Pod", Name: "solo", Action: rollout.Recreate})
			if tc.ready {
				if err != nil {
					t.Fatal(err)
				}
				if pod := m.cache.get("pods", "ns", "solo"); pod == nil || pod.GetUID() != "uid-2" || !rollout.PodReady(pod) {
					t.Errorf("the step ended before the Pod created again was Ready: %v", pod)
				}
				return
			}
			failure(t, err, rollout.ReasonProgressDeadline, "no progress for 10s (waiting for the Pod created again to be Ready)")
		})
	}
}

// TestWaitRecreated looks once: only the Pod of the new UID, Ready,
// ends the wait; the Pod deleted, still in the cache, does not.
func TestWaitRecreated(t *testing.T) {
	t.Parallel()
	step := rollout.Step{Namespace: "ns", Kind: "Pod", Name: "solo"}
	for _, tc := range []struct {
		name string
		pod  *unstructured.Unstructured
		ok   bool
	}{
		{"the new Pod Ready", podOf(t, nil, "solo", "uid-2", "", "", true), true},
		{"the new Pod not Ready", podOf(t, nil, "solo", "uid-2", "", "", false), false},
		{"the old Pod Ready", podOf(t, nil, "solo", "uid-1", "", "", true), false},
		{"no Pod", podOf(t, nil, "other", "uid-2", "", "", true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _, _ := fakeMover(t, tc.pod)
			err := m.waitRecreated(cancelled(), step, "uid-2")
			if tc.ok {
				if err != nil {
					t.Error(err)
				}
				return
			}
			failure(t, err, rollout.ReasonInterrupted, "stopped waiting (waiting for the Pod created again to be Ready)")
		})
	}
}
