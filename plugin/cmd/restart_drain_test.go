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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/reason"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// fakeClock is a clock whose waits return at once, moving it on.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.slept = append(c.slept, d)
	ch := make(chan time.Time, 1)
	ch <- c.t
	return ch
}

// fakeProxy records the POSTs of a drain; onPost (or onPod, told the
// Pod too) plays what the kubelet and the endpoint controller do when the
// proxy answers one.
type fakeProxy struct {
	mu     sync.Mutex
	calls  []string
	errs   map[string]error // by path
	onPost func(path string)
	onPod  func(pod, path string)
	// left is, for each call, how long its context had left (-1: no
	// deadline, 0: done).
	left []time.Duration
}

func (f *fakeProxy) Post(ctx context.Context, namespace, pod string, port int, path string) error {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("POST %s/%s:%d%s", namespace, pod, port, path))
	left := time.Duration(-1)
	if deadline, ok := ctx.Deadline(); ok {
		left = time.Until(deadline)
	}
	if ctx.Err() != nil {
		left = 0
	}
	f.left = append(f.left, left)
	err := f.errs[path]
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if f.onPost != nil {
		f.onPost(path)
	}
	if f.onPod != nil {
		f.onPod(pod, path)
	}
	return nil
}

func (f *fakeProxy) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

var testDrain = &template.Drain{Container: "envoy", Port: 9901, Fail: "/healthcheck/fail", Restore: "/healthcheck/ok", Seconds: 5}

func decode(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

func drainPodObject(t *testing.T, name string, ready bool) *unstructured.Unstructured {
	return decode(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: ns, uid: uid-%s, resourceVersion: "1"}
spec:
  initContainers: [{name: envoy, image: envoy:a, restartPolicy: Always}]
  containers: [{name: app, image: app}]
status:
  conditions: [{type: Ready, status: %q}]
`, name, name, map[bool]string{true: "True", false: "False"}[ready]))
}

func sliceObject(t *testing.T, pods map[string]bool) *unstructured.Unstructured {
	var b strings.Builder
	b.WriteString("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-x, namespace: ns}\naddressType: IPv4\nendpoints:\n")
	for name, ready := range pods {
		fmt.Fprintf(&b, "- addresses: [10.0.0.1]\n  conditions: {ready: %v}\n  targetRef: {kind: Pod, namespace: ns, name: %s, uid: uid-%s}\n", ready, name, name)
	}
	return decode(t, b.String())
}

// fakeMover is a restartMover on a fake dynamic client holding objs, its
// cache started, with a fake clock and proxy.
func fakeMover(t *testing.T, objs ...runtime.Object) (*restartMover, *dynamicfake.FakeDynamicClient, *fakeClock, *fakeProxy) {
	t.Helper()
	kinds := map[schema.GroupVersionResource]string{
		endpointSliceResource: "EndpointSliceList",
		serviceResource:       "ServiceList",
		pdbResource:           "PodDisruptionBudgetList",
	}
	for _, r := range statusResources {
		kinds[r.gvr] = kindOf(r.gvr.Resource) + "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, objs...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cache := newRestartCache(client, "ns")
	if err := cache.start(ctx); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	proxy := &fakeProxy{errs: map[string]error{}}
	m := &restartMover{
		cache: cache, client: client, deadline: 10 * time.Second, now: clock.now, after: clock.after,
		drain: testDrain, caller: proxy, patcher: &live.Patcher{FieldManager: "test"},
	}
	return m, client, clock, proxy
}

// store writes obj to the fake cluster and waits until the cache holds it.
func store(t *testing.T, m *restartMover, client *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	t.Helper()
	if _, err := client.Resource(gvr).Namespace(obj.GetNamespace()).Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if gvr.Resource != "pods" {
		return
	}
	want := rollout.PodReady(obj)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := m.cache.get("pods", obj.GetNamespace(), obj.GetName()); p != nil && rollout.PodReady(p) == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the cache never saw Pod %s Ready=%v", obj.GetName(), want)
}

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// TestDrainPodTakesPodOutOfService: the drain POSTs the template's fail
// path to the proxy, waits until the Pod is not Ready and no
// EndpointSlice lists it ready, then the drain's seconds, and keeps how
// many entries listed it.
func TestDrainPodTakesPodOutOfService(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, client, clock, proxy := fakeMover(t, pod, sliceObject(t, map[string]bool{"web-a": true, "web-b": true}))
	proxy.onPost = func(path string) {
		if path == testDrain.Fail {
			store(t, m, client, endpointSliceResource, sliceObject(t, map[string]bool{"web-a": false, "web-b": true}))
			store(t, m, client, podsResource, drainPodObject(t, "web-a", false))
		}
	}
	d, err := m.drainPod(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if d.listed != 1 {
		t.Errorf("listed %d times before the drain, want 1", d.listed)
	}
	if got := proxy.called(); len(got) != 1 || got[0] != "POST ns/web-a:9901/healthcheck/fail" {
		t.Errorf("calls %v, want the fail path alone", got)
	}
	if n := len(clock.slept); n == 0 || clock.slept[n-1] != 5*time.Second {
		t.Errorf("waits %v, want the drain's 5s last", clock.slept)
	}
}

// TestDrainPodStillInService: a proxy whose drain changes nothing (a
// readinessProbe that does not read it) fails the drain at the deadline,
// naming why, and the drain is undone.
func TestDrainPodStillInService(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		slice map[string]bool
		want  string
	}{
		{"listed ready", map[string]bool{"web-a": true}, "1 EndpointSlice entries still list it as ready"},
		{"in no slice, Ready", nil, "its Ready condition is still True"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := drainPodObject(t, "web-a", true)
			m, _, clock, proxy := fakeMover(t, pod, sliceObject(t, tc.slice))
			start := clock.now()
			_, err := m.drainPod(context.Background(), pod)
			var f *rollout.Failure
			if !errors.As(err, &f) || f.Reason != rollout.ReasonDrain {
				t.Fatalf("error %v, want %s", err, rollout.ReasonDrain)
			}
			for _, want := range []string{"Pod web-a still in service 10s after POST /healthcheck/fail (" + tc.want + ")", "readinessProbe of container envoy", "its drain was undone"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if got := proxy.called(); len(got) != 2 || got[1] != "POST ns/web-a:9901/healthcheck/ok" {
				t.Errorf("calls %v, want fail then restore", got)
			}
			if waited := clock.now().Sub(start); waited <= 10*time.Second || waited > 11*time.Second {
				t.Errorf("gave up after %s, want just past the 10s deadline", waited)
			}
		})
	}
}

// TestDrainPodErrors: a failed POST changes nothing and is not undone; a
// failed restore is said; without a drain step nothing is called.
func TestDrainPodErrors(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, _, _, proxy := fakeMover(t, pod)
	proxy.errs[testDrain.Fail] = errors.New("answered 404 Not Found")
	_, err := m.drainPod(context.Background(), pod)
	var f *rollout.Failure
	if !errors.As(err, &f) || f.Reason != rollout.ReasonDrain || err.Error() != "draining Pod web-a (POST /healthcheck/fail on port 9901 of container envoy): answered 404 Not Found" {
		t.Errorf("error %v", err)
	}
	if got := proxy.called(); len(got) != 1 {
		t.Errorf("calls %v, want the failed POST alone", got)
	}

	m, _, _, proxy = fakeMover(t, pod)
	proxy.errs[testDrain.Restore] = errors.New("connection refused")
	_, err = m.drainPod(context.Background(), pod)
	if err == nil || !strings.Contains(err.Error(), "its drain was undone (undoing the drain of Pod web-a (POST /healthcheck/ok): connection refused)") {
		t.Errorf("error %v does not say the restore failed", err)
	}

	m, _, _, proxy = fakeMover(t, pod)
	m.drain = nil
	if d, err := m.drainPod(context.Background(), pod); err != nil || d.listed != 0 {
		t.Errorf("without a drain step: %+v, %v", d, err)
	}
	if err := m.restore(context.Background(), &drained{pod: pod}); err != nil {
		t.Errorf("restore without a drain step: %v", err)
	}
	if got := proxy.called(); len(got) != 0 {
		t.Errorf("without a drain step, calls %v", got)
	}
}

// TestDrainPodStopped: a run stopped while a Pod is drained undoes the
// drain.
func TestDrainPodStopped(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, _, _, proxy := fakeMover(t, pod, sliceObject(t, map[string]bool{"web-a": true}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.after = func(time.Duration) <-chan time.Time { return nil }
	_, err := m.drainPod(ctx, pod)
	var f *rollout.Failure
	if !errors.As(err, &f) || f.Reason != rollout.ReasonInterrupted {
		t.Fatalf("error %v, want %s", err, rollout.ReasonInterrupted)
	}
	if got := proxy.called(); len(got) != 2 || !strings.HasSuffix(got[1], testDrain.Restore) {
		t.Errorf("calls %v, want fail then restore", got)
	}
}

// TestUpgradePodPatchFailsRestores: when the image's PATCH fails after
// the drain, the drain is undone and the PATCH's error returned; a Pod
// deleted while drained is not.
func TestUpgradePodPatchFailsRestores(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, client, _, proxy := fakeMover(t, pod)
	proxy.onPost = func(path string) {
		if path == testDrain.Fail {
			store(t, m, client, podsResource, drainPodObject(t, "web-a", false))
		}
	}
	client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server is on fire")
	})
	u := rollout.Upgrade{Namespace: "ns", Pod: "web-a", RecordKey: "r", MarkerKey: "m", Images: []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}}
	err := m.upgradePod(context.Background(), u, pod)
	var f *rollout.Failure
	// The PATCH's error alone: the restore went well.
	if !errors.As(err, &f) || f.Reason != rollout.ReasonAPI || !strings.HasSuffix(err.Error(), "upgrading Pod web-a in place: the server is on fire") {
		t.Fatalf("error %v", err)
	}
	if got := proxy.called(); len(got) != 2 || !strings.HasSuffix(got[1], testDrain.Restore) {
		t.Errorf("calls %v, want fail then restore", got)
	}
	// A restore that fails too is told after it.
	proxy.errs[testDrain.Restore] = errors.New("connection refused")
	store(t, m, client, podsResource, pod)
	err = m.upgradePod(context.Background(), u, pod)
	if !errors.As(err, &f) || f.Reason != rollout.ReasonAPI || !strings.Contains(err.Error(), "the server is on fire; undoing the drain of Pod web-a") ||
		!strings.HasSuffix(err.Error(), "connection refused") {
		t.Errorf("error %v, want the PATCH's, then the restore's", err)
	}

	// deleted while drained: nothing to undo
	gone := drainPodObject(t, "web-b", true)
	m, client, _, proxy = fakeMover(t, gone)
	proxy.onPost = func(string) {
		if err := client.Resource(podsResource).Namespace("ns").Delete(context.Background(), "web-b", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
		for m.cache.get("pods", "ns", "web-b") != nil {
			time.Sleep(5 * time.Millisecond)
		}
	}
	u.Pod = "web-b"
	err = m.upgradePod(context.Background(), u, gone)
	if !errors.As(err, &f) || f.Reason != rollout.ReasonGone {
		t.Errorf("error %v, want %s", err, rollout.ReasonGone)
	}
	if got := proxy.called(); len(got) != 1 {
		t.Errorf("calls %v, want the drain alone", got)
	}
}

// TestNoDrainWarning: restart warns when it upgrades Pods in place
// without a drain, and only then.
func TestNoDrainWarning(t *testing.T) {
	t.Parallel()
	inPlace := []rollout.Step{{Action: rollout.Restart}, {Action: rollout.InPlace}}
	withDrain := &template.Template{Drain: testDrain}
	for _, tc := range []struct {
		name  string
		steps []rollout.Step
		t     *template.Template
		on    bool
		want  string
	}{
		{"drained", inPlace, withDrain, true, ""},
		{"nothing in place", []rollout.Step{{Action: rollout.Restart}}, &template.Template{}, true, ""},
		{"--drain=false", inPlace, withDrain, false, "warning: --drain=false: "},
		{"no drain step", inPlace, &template.Template{}, true, "warning: the template declares no drain step"},
	} {
		got := noDrainWarning(tc.steps, tc.t, tc.on)
		if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if d := drainOf(tc.t, tc.on); (d != nil) != (tc.on && tc.t.Drain != nil) {
			t.Errorf("%s: drainOf %+v", tc.name, d)
		}
	}
}

// TestPatchDrained: a drained Pod is patched at the resourceVersion read
// after its drain; refused for a conflict, it is read and patched again,
// at most conflictRetries times more; a Pod whose sidecar image or record
// changed meanwhile, or that was created again, is not patched.
func TestPatchDrained(t *testing.T) {
	t.Parallel()
	u := rollout.Upgrade{Namespace: "ns", Pod: "web-a", RecordKey: "r", MarkerKey: "m", Images: []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}}
	for _, tc := range []struct {
		name      string
		conflicts int
		edit      func(*unstructured.Unstructured)
		patches   int
		want      reason.Code // "" for success, else the Failure's reason
		drained   bool
		gets      int
	}{
		{"no conflict", 0, nil, 1, "", true, 1},
		{"not drained: patched as judged", 0, nil, 1, "", false, 0},
		{"not drained, a conflict: read again", 1, nil, 2, "", false, 1},
		{"two conflicts", 2, nil, 3, "", true, 3},
		{"conflicts past the retries", conflictRetries + 1, nil, conflictRetries + 1, rollout.ReasonAPI, true, conflictRetries + 1},
		{"image changed", 0, func(p *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(p.Object, []any{map[string]any{"name": "envoy", "image": "envoy:z", "restartPolicy": "Always"}}, "spec", "initContainers")
		}, 0, rollout.ReasonInjection, true, 1},
		{"record changed", 0, func(p *unstructured.Unstructured) { p.SetAnnotations(map[string]string{"r": "other"}) }, 0, rollout.ReasonInjection, true, 1},
		{"created again", 0, func(p *unstructured.Unstructured) { p.SetUID("another") }, 0, rollout.ReasonGone, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := drainPodObject(t, "web-a", true)
			stored := pod.DeepCopy()
			if tc.edit != nil {
				tc.edit(stored)
			}
			m, client, _, _ := fakeMover(t, stored)
			patches, gets := 0, 0
			client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				gets++
				return false, nil, nil
			})
			client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				patches++
				if patches <= tc.conflicts {
					return true, nil, apierrorsNewConflict("web-a")
				}
				// the fake client cannot apply a strategic merge patch to
				// an unstructured Pod: answer as the API server would
				return true, stored, nil
			})
			err := m.patchDrained(context.Background(), u, pod, tc.drained)
			var f *rollout.Failure
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want != "" && (!errors.As(err, &f) || f.Reason != tc.want):
				t.Errorf("error %v, want %s", err, tc.want)
			}
			if patches != tc.patches || gets != tc.gets {
				t.Errorf("%d PATCHes and %d GETs, want %d and %d", patches, gets, tc.patches, tc.gets)
			}
		})
	}
}

func apierrorsNewConflict(name string) error {
	return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, name, errors.New("the object has been modified"))
}

// TestDrainPodPublishNotReady: the EndpointSlices of a Service that
// publishes not-ready addresses list the Pod ready whatever the drain
// does; they are not waited on, nor counted for its return, while another
// Service's are; a Service that cannot be read is waited on.
func TestDrainPodPublishNotReady(t *testing.T) {
	t.Parallel()
	slice := func(name, service string, ready bool) *unstructured.Unstructured {
		return decode(t, fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s, namespace: ns, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: %v}
  targetRef: {kind: Pod, namespace: ns, name: web-a, uid: uid-web-a}
`, name, service, ready))
	}
	service := func(name string, publish bool) *unstructured.Unstructured {
		return decode(t, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: ns}\nspec: {publishNotReadyAddresses: %v}", name, publish))
	}
	pod := drainPodObject(t, "web-a", true)
	m, client, _, proxy := fakeMover(t, pod, slice("peers-x", "peers", true), slice("web-x", "web", true), service("peers", true), service("web", false))
	proxy.onPost = func(path string) {
		if path == testDrain.Fail {
			store(t, m, client, endpointSliceResource, slice("web-x", "web", false))
			store(t, m, client, podsResource, drainPodObject(t, "web-a", false))
		}
	}
	d, err := m.drainPod(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if d.listed != 1 {
		t.Errorf("listed %d times, want 1 (web's slice; peers' publishes not-ready addresses)", d.listed)
	}
	if got := proxy.called(); len(got) != 1 {
		t.Errorf("calls %v, want the drain alone", got)
	}

	// peers' Service gone: its slice is waited on, and never empties
	m, _, _, proxy = fakeMover(t, pod, slice("peers-x", "peers", true))
	if _, err := m.drainPod(context.Background(), pod); err == nil || !strings.Contains(err.Error(), "1 EndpointSlice entries still list it as ready") {
		t.Errorf("error %v, want the slice of an unreadable Service waited on", err)
	}
}
