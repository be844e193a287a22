package cmd

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestUpgradePodResizeAloneNotDrained: an upgrade that changes no image
// restarts no sidecar, so the Pod is not drained.
func TestUpgradePodResizeAloneNotDrained(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, client, _, proxy := fakeMover(t, pod)
	client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, pod, nil
	})
	gets := 0
	client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		return false, nil, nil
	})
	u := rollout.Upgrade{Namespace: "ns", Pod: "web-a", RecordKey: "r", MarkerKey: "m"}
	if err := m.upgradePod(context.Background(), u, pod); err != nil {
		t.Fatal(err)
	}
	// Not drained: patched as it was judged, not read again.
	if got := proxy.called(); len(got) != 0 || gets != 0 {
		t.Errorf("calls %v and %d GETs, want none", got, gets)
	}
	u.Images = []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}
	_ = m.upgradePod(context.Background(), u, pod)
	if got := proxy.called(); len(got) == 0 || !strings.HasSuffix(got[0], testDrain.Fail) {
		t.Errorf("with an image change, calls %v, want the drain first", got)
	}
}

// inPlaceMover is recreateMover (injecting envoy:b) with a fake kubelet
// running pods, each injected with envoy:a, of owner (KIND/UID, "" for
// none) and labels.
func inPlaceMover(t *testing.T, owner, labels string, pods []string, objs ...runtime.Object) (*restartMover, *fakeKubelet) {
	t.Helper()
	m, client := recreateMover(t, objs...)
	k := newFakeKubelet(t, m, client)
	old := testInjector(t, "envoy:a")
	for _, name := range pods {
		k.add(podOf(t, old, name, "uid-"+name, owner, labels, true))
	}
	return m, k
}

var webAStep = rollout.Step{Namespace: "ns", Kind: "Pod", Name: "web-a", Action: rollout.InPlace}

func sameRequests(t *testing.T, k *fakeKubelet, want ...string) {
	t.Helper()
	if got := k.requests(); !slices.Equal(got, want) {
		t.Errorf("requests %q\nwant     %q", got, want)
	}
}

// TestUpgradeInPlacePod: a Pod without a controller is its own workload:
// drained, patched once to the new image at the resourceVersion it was
// read at after its drain, back in service, and then current.
func TestUpgradeInPlacePod(t *testing.T) {
	t.Parallel()
	m, k := inPlaceMover(t, "", "app: web", []string{"web-a"})
	if err := m.upgradeInPlace(bounded(t, 10*time.Second), "pods", webAStep, 0); err != nil {
		t.Fatal(err)
	}
	sameRequests(t, k, "drain web-a", "patch web-a")
	pod := k.stored("web-a")
	if got := sidecarImage(pod); got != "envoy:b" || !rollout.PodReady(pod) {
		t.Errorf("the Pod runs %s, Ready %v; want envoy:b, Ready", got, rollout.PodReady(pod))
	}
	if u := rollout.DecideUpgrade(m.injector, pod); u.Reason != rollout.ReasonAlreadyCurrent {
		t.Errorf("the Pod after its upgrade: %s %s, want %s", u.Reason, u.Message, rollout.ReasonAlreadyCurrent)
	}
}

// TestUpgradeInPlaceRollsBack: a new sidecar that never gets Ready is
// rolled back once the deadline passes (not drained again: the Pod does
// not serve), the Pod waited on until it serves on the old one, and the
// step fails naming the Pod, the container and the kubelet's reason. The
// Pod is then as it was: image, record and marker.
func TestUpgradeInPlaceRollsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		oldBroken  bool // the old image crashes too once restarted
		unlisted   bool // no EndpointSlice lists the Pod: not waited on
		wantSuffix string
	}{
		{"back in service", false, false, "rolled back to envoy=envoy:a"},
		{"the old image fails too", true, false, "rolled back to envoy=envoy:a, but not Ready on its new sidecar within 10s: container envoy (envoy:a): CrashLoopBackOff (back-off 10s restarting failed container)"},
		{"in no Service", true, true, "rolled back to envoy=envoy:a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, client := recreateMover(t)
			k := newFakeKubelet(t, m, client)
			k.unlisted = tc.unlisted
			k.add(podOf(t, testInjector(t, "envoy:a"), "web-a", "uid-web-a", "", "app: web", true))
			before := k.stored("web-a").GetAnnotations()
			k.broken["envoy:b"], k.broken["envoy:a"] = true, tc.oldBroken
			err := m.upgradeInPlace(bounded(t, 10*time.Second), "pods", webAStep, 0)
			failure(t, err, rollout.ReasonRolledBack, "Pod web-a: not Ready on its new sidecar within 10s: container envoy (envoy:b): CrashLoopBackOff (back-off 10s restarting failed container); "+tc.wantSuffix)
			sameRequests(t, k, "drain web-a", "patch web-a", "patch web-a")
			pod := k.stored("web-a")
			if got := sidecarImage(pod); got != "envoy:a" || !maps.Equal(pod.GetAnnotations(), before) {
				t.Errorf("after the rollback: %s, annotations %v\nwant envoy:a, %v", got, pod.GetAnnotations(), before)
			}
		})
	}
}

// TestUpgradeInPlaceStillBehind: a Pod judged behind again after its
// upgrade (something put its record back) fails the step instead of
// being upgraded forever.
func TestUpgradeInPlaceStillBehind(t *testing.T) {
	t.Parallel()
	m, k := inPlaceMover(t, "", "app: web", []string{"web-a"})
	before := k.stored("web-a").GetAnnotations()
	k.edit = func(pod *unstructured.Unstructured) { pod.SetAnnotations(before) }
	err := m.upgradeInPlace(bounded(t, 10*time.Second), "pods", webAStep, 0)
	failure(t, err, rollout.ReasonInjection, "Pod web-a still runs an outdated sidecar after its upgrade in place")
	sameRequests(t, k, "drain web-a", "patch web-a")
}

// TestUpgradeInPlaceNotImageOnly: a Pod the new template changes beyond
// its sidecars' images is not touched; the step fails saying recreate
// would do it.
func TestUpgradeInPlaceNotImageOnly(t *testing.T) {
	t.Parallel()
	m, client := recreateMover(t)
	k := newFakeKubelet(t, m, client)
	classic, err := inject.New(inject.DefaultTemplate(), inject.Settings{Image: "envoy:a", Native: new(bool)})
	if err != nil {
		t.Fatal(err)
	}
	k.add(podOf(t, classic, "web-a", "uid-web-a", "", "app: web", true))
	err = m.upgradeInPlace(bounded(t, 10*time.Second), "pods", webAStep, 0)
	failure(t, err, rollout.ReasonNotImageOnly, "Pod web-a: not_image_only: metadata.annotations.kubectl.kubernetes.io/default-container changes, not only the sidecar's image and resources: a running Pod cannot take it; --strategy recreate recreates it")
	sameRequests(t, k)
}

// TestUpgradeInPlaceGone: a Pod deleted before its step is reported
// gone.
func TestUpgradeInPlaceGone(t *testing.T) {
	t.Parallel()
	m, k := inPlaceMover(t, "", "app: web", nil)
	err := m.upgradeInPlace(bounded(t, 10*time.Second), "pods", webAStep, 0)
	failure(t, err, rollout.ReasonGone, "the Pod was deleted")
	sameRequests(t, k)
}

// envoyResources is the resources of the sidecar envoy of pod.
func envoyResources(t *testing.T, pod *unstructured.Unstructured) map[string]any {
	t.Helper()
	list, _, _ := unstructured.NestedSlice(pod.Object, "spec", "initContainers")
	for _, item := range list {
		if c, _ := item.(map[string]any); c["name"] == sidecarName {
			return runtime.DeepCopyJSONValue(c["resources"]).(map[string]any)
		}
	}
	t.Fatalf("Pod %s has no sidecar %s", pod.GetName(), sidecarName)
	return nil
}

// TestUpgradePodRollsBackResize: a resize the kubelet or the API server
// refuses is rolled back with the images. A Pod that serves on a new
// proxy image is drained before the rollback restarts it, and waited on
// until it serves again; one whose resources alone changed is not
// drained, as its proxy is not restarted (nothing would bring it back
// into service).
func TestUpgradePodRollsBackResize(t *testing.T) {
	t.Parallel()
	const infeasible = "Node didn't have enough capacity: memory, requested: 2147483648, capacity: 1073741824"
	bigger := map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "2Gi"}, "limits": map[string]any{"cpu": "1", "memory": "2Gi"}}
	image := []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}
	for _, tc := range []struct {
		name         string
		images       []rollout.ImageChange
		refuseResize bool // the API server refuses the resize (else the kubelet: Infeasible)
		want         string
		requests     []string
	}{
		{"resources alone", nil, false,
			"Pod web-a: the kubelet cannot resize its sidecar: resize Infeasible: " + infeasible + "; rolled back to envoy resources requests cpu=100m,memory=64Mi; limits cpu=1000m,memory=512Mi",
			[]string{"patch web-a", "resize web-a", "resize web-a", "patch web-a"}},
		{"image and resources", image, false,
			"Pod web-a: the kubelet cannot resize its sidecar: resize Infeasible: " + infeasible + "; rolled back to envoy=envoy:a, envoy resources requests cpu=100m,memory=64Mi; limits cpu=1000m,memory=512Mi",
			[]string{"drain web-a", "patch web-a", "resize web-a", "drain web-a", "resize web-a", "patch web-a"}},
		{"a resize refused", image, true,
			"Pod web-a: resizing its sidecar: the server is on fire; rolled back to envoy=envoy:a, envoy resources requests cpu=100m,memory=64Mi; limits cpu=1000m,memory=512Mi",
			[]string{"drain web-a", "patch web-a", "resize web-a", "drain web-a", "patch web-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, k := inPlaceMover(t, "", "app: web", []string{"web-a"})
			pod := m.cache.get("pods", "ns", "web-a")
			before := k.stored("web-a")
			k.infeasible = infeasible
			k.refuse = func(request, _ string, _ []byte) error {
				if request == "resize" && tc.refuseResize {
					return errors.New("the server is on fire")
				}
				return nil
			}
			u := rollout.Upgrade{Namespace: "ns", Pod: "web-a", RecordKey: "r", MarkerKey: "m", Images: tc.images,
				Resources: []rollout.ResourceChange{{Container: "envoy", Init: true, From: envoyResources(t, before), To: bigger}}}
			err := m.upgradePod(bounded(t, 10*time.Second), u, pod)
			failure(t, err, rollout.ReasonRolledBack, tc.want)
			sameRequests(t, k, tc.requests...)
			// The rollback's own time: the deadline and 30 s more, even
			// for its drain.
			proxy := m.caller.(*fakeProxy)
			if tc.images != nil {
				if left := proxy.left[len(proxy.left)-1]; left < m.deadline+29*time.Second || left > m.deadline+30*time.Second {
					t.Errorf("the rollback's drain had %v left, want %v", left, m.deadline+30*time.Second)
				}
			}
			after := k.stored("web-a")
			if !rollout.PodReady(after) || sidecarImage(after) != "envoy:a" || !reflect.DeepEqual(envoyResources(t, after), envoyResources(t, before)) {
				t.Errorf("after the rollback: Ready %v, %s, %v; want Ready, envoy:a, %v", rollout.PodReady(after), sidecarImage(after), envoyResources(t, after), envoyResources(t, before))
			}
		})
	}
}

// dbSet is StatefulSet db of 2 Pods, OnDelete, at revision db-2 with
// both Pods Ready at db-1; maxUnavailable 0 leaves it unset (one Pod at
// a time).
func dbSet(t *testing.T, maxUnavailable int) *unstructured.Unstructured {
	sts := statefulSet(t, 2, 0)
	if maxUnavailable > 0 {
		_ = unstructured.SetNestedField(sts.Object, int64(maxUnavailable), "spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
	}
	return sts
}

var dbStep = rollout.Step{Namespace: "ns", Kind: "StatefulSet", Group: "apps", Name: "db", Action: rollout.InPlace}

// TestUpgradeInPlaceBatches: the Pods of an OnDelete StatefulSet are
// upgraded in batches as large as its budget and the fleet's slots
// allow, each getting the update revision's label with its images; the
// step ends once the controller's status counts them (later than the
// PATCHes).
func TestUpgradeInPlaceBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		maxUnavailable int
		slots          int // 0: no bound
		together       bool
	}{
		{"one at a time", 0, 0, false},
		{"two at once", 2, 0, true},
		{"two allowed, one slot", 2, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, k := inPlaceMover(t, "StatefulSet/sts-db", "app: db, controller-revision-hash: db-1", []string{"db-0", "db-1"}, dbSet(t, tc.maxUnavailable))
			if tc.slots > 0 {
				m.slots = make(chan struct{}, tc.slots)
			}
			var mu sync.Mutex
			arrived := map[string]bool{}
			k.beforeDrain = func(pod string) {
				// with two at once, each drain waits for the other's:
				// both Pods are out of service together.
				mu.Lock()
				arrived[pod] = true
				mu.Unlock()
				for deadline := time.Now().Add(5 * time.Second); tc.together && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					mu.Lock()
					n := len(arrived)
					mu.Unlock()
					if n == 2 {
						return
					}
				}
			}
			k.edit = func(pod *unstructured.Unstructured) {
				if pod.GetLabels()["controller-revision-hash"] != "db-2" {
					return
				}
				// the controller counts the Pod a moment later
				go func() {
					time.Sleep(20 * time.Millisecond)
					k.count("db")
				}()
			}
			if err := m.upgradeInPlace(bounded(t, 10*time.Second), "statefulsets", dbStep, 1); err != nil {
				t.Fatal(err)
			}
			got := k.requests()
			if len(got) != 4 {
				t.Fatalf("requests %q, want a drain and a PATCH of each Pod", got)
			}
			if tc.together {
				if !strings.HasPrefix(got[0], "drain ") || !strings.HasPrefix(got[1], "drain ") || got[0] == got[1] {
					t.Errorf("requests %q, want both Pods drained first", got)
				}
			} else if got[0] != "drain "+strings.TrimPrefix(got[1], "patch ") || got[2] != "drain "+strings.TrimPrefix(got[3], "patch ") || got[0] == got[2] {
				t.Errorf("requests %q, want one Pod drained and patched, then the other", got)
			}
			for _, name := range []string{"db-0", "db-1"} {
				if pod := k.stored(name); pod.GetLabels()["controller-revision-hash"] != "db-2" || sidecarImage(pod) != "envoy:b" {
					t.Errorf("Pod %s: labels %v, %s; want revision db-2, envoy:b", name, pod.GetLabels(), sidecarImage(pod))
				}
			}
			sts, err := k.client.Tracker().Get(statefulSetsResource, "ns", "db")
			if err != nil {
				t.Fatal(err)
			}
			if n, _, _ := unstructured.NestedInt64(sts.(*unstructured.Unstructured).Object, "status", "updatedReplicas"); n != 2 {
				t.Errorf("the step ended with %d Pods counted as updated, want it to wait for 2", n)
			}
		})
	}
}

// TestUpgradeInPlaceNothingBehind: a workload whose Pods all run the
// current sidecar is left as it is, without waiting on its status (which
// counts none of them as updated here).
func TestUpgradeInPlaceNothingBehind(t *testing.T) {
	t.Parallel()
	m, client := recreateMover(t, dbSet(t, 0))
	k := newFakeKubelet(t, m, client)
	for _, name := range []string{"db-0", "db-1"} {
		k.add(podOf(t, m.injector, name, "uid-"+name, "StatefulSet/sts-db", "app: db, controller-revision-hash: db-2", true))
	}
	if err := m.upgradeInPlace(bounded(t, 3*time.Second), "statefulsets", dbStep, 1); err != nil {
		t.Fatal(err)
	}
	sameRequests(t, k)
}

// TestUpgradeInPlacePodNotReady: a Pod without a controller is upgraded
// as it is, Ready or not (no controller settles it first): a crashing
// sidecar is the very thing an upgrade may mend.
func TestUpgradeInPlacePodNotReady(t *testing.T) {
	t.Parallel()
	m, client := recreateMover(t)
	k := newFakeKubelet(t, m, client)
	k.broken["envoy:a"] = true
	k.add(podOf(t, testInjector(t, "envoy:a"), "web-a", "uid-web-a", "", "app: web", false))
	if err := m.upgradeInPlace(bounded(t, 3*time.Second), "pods", webAStep, 0); err != nil {
		t.Fatal(err)
	}
	sameRequests(t, k, "drain web-a", "patch web-a")
	if pod := k.stored("web-a"); !rollout.PodReady(pod) || sidecarImage(pod) != "envoy:b" {
		t.Errorf("the Pod runs %s, Ready %v; want envoy:b, Ready", sidecarImage(pod), rollout.PodReady(pod))
	}
}

// TestWaitUpgradedDeadline: the wait for an upgraded Pod gives it the
// whole deadline: Ready after 11 s of a 10 s deadline is still waited
// for (the last look comes past it), after 12 s it is not.
func TestWaitUpgradedDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		readyAt int // the tick (a second each) at which the Pod gets Ready
		err     string
	}{
		{11, ""},
		{12, "not Ready on its new sidecar within 10s: container envoy (envoy:a): CrashLoopBackOff (back-off 10s restarting failed container)"},
	} {
		m, k := inPlaceMover(t, "", "app: web", []string{"web-a"})
		k.mu.Lock()
		k.broken["envoy:a"] = true
		k.mu.Unlock()
		pod := k.write(k.stored("web-a").DeepCopy())
		clock, ticks := &fakeClock{t: time.Unix(1_000_000, 0)}, 0
		m.now = clock.now
		m.after = func(d time.Duration) <-chan time.Time {
			if ticks++; ticks == tc.readyAt {
				k.mu.Lock()
				k.broken["envoy:a"] = false
				k.mu.Unlock()
				k.write(k.stored("web-a").DeepCopy())
			}
			return clock.after(d)
		}
		u := rollout.Upgrade{Namespace: "ns", Pod: "web-a", Images: []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:0", To: "envoy:a"}}}
		err := m.waitUpgraded(bounded(t, 10*time.Second), u, pod.GetUID())
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || err.Error() != tc.err) {
			t.Errorf("Ready at %d s: %v, want %q", tc.readyAt, err, tc.err)
		}
	}
}
