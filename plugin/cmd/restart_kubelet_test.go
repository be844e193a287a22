package cmd

import (
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// fakeKubelet plays, on the fake cluster, what an upgrade in place meets
// past restart's own code:
//   - the API server's PATCH of a Pod: merged as it merges one (a strategic
//     merge on a v1 Pod), refused for a resourceVersion that is no longer
//     the Pod's;
//   - the kubelet: every container runs its spec's image, ready unless the
//     image is broken (then in CrashLoopBackOff) or it is the proxy of a
//     drained Pod (its readiness probe reads the proxy's health); a resize
//     is applied, or held pending as Infeasible when infeasible is set;
//   - the endpoint controller: EndpointSlice web-x lists every Pod, ready
//     as the Pod is.
//
// Every request is logged in order: "drain POD" and "restore POD" (the
// proxy's POSTs), "patch POD" and "resize POD".
type fakeKubelet struct {
	t      *testing.T
	m      *restartMover
	client *dynamicfake.FakeDynamicClient

	mu      sync.Mutex
	countMu sync.Mutex // one controller's count at a time
	writeMu sync.Mutex // one write and its EndpointSlice at a time
	log     []string
	patches []string        // the bodies of the PATCHes, in order
	drained map[string]bool // Pods whose proxy answers not ready
	rv      int

	// set before the upgrade starts:
	broken     map[string]bool
	infeasible string
	// refuse answers a request in place of the API server (nil: apply it).
	refuse func(request, pod string, body []byte) error
	// edit changes a Pod after a PATCH of its images, as a webhook would.
	edit func(pod *unstructured.Unstructured)
	// unlisted: no Service selects the Pods, the EndpointSlice lists none.
	unlisted bool
	// beforeDrain is told of a drain's POST (logged) before the proxy
	// answers it.
	beforeDrain func(pod string)
}

const sidecarName = "envoy"

// newFakeKubelet answers the PATCHes of m's fake cluster and its proxy's
// POSTs.
func newFakeKubelet(t *testing.T, m *restartMover, client *dynamicfake.FakeDynamicClient) *fakeKubelet {
	k := &fakeKubelet{t: t, m: m, client: client, drained: map[string]bool{}, broken: map[string]bool{}}
	m.caller.(*fakeProxy).onPod = func(pod, path string) {
		k.mu.Lock()
		k.log = append(k.log, map[bool]string{true: "drain ", false: "restore "}[path == testDrain.Fail]+pod)
		k.mu.Unlock()
		if k.beforeDrain != nil && path == testDrain.Fail {
			k.beforeDrain(pod)
		}
		k.mu.Lock()
		k.drained[pod] = path == testDrain.Fail
		k.mu.Unlock()
		stored, err := client.Tracker().Get(podsResource, "ns", pod)
		if err != nil {
			t.Error(err)
			return
		}
		k.write(stored.(*unstructured.Unstructured).DeepCopy())
	}
	client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		request := "patch"
		if p.GetSubresource() == "resize" {
			request = "resize"
		}
		k.mu.Lock()
		k.log = append(k.log, request+" "+p.GetName())
		k.patches = append(k.patches, string(p.GetPatch()))
		k.mu.Unlock()
		if k.refuse != nil {
			if err := k.refuse(request, p.GetName(), p.GetPatch()); err != nil {
				return true, nil, err
			}
		}
		stored, err := client.Tracker().Get(podsResource, p.GetNamespace(), p.GetName())
		if err != nil {
			return true, nil, err
		}
		pod := stored.(*unstructured.Unstructured)
		var body struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(p.GetPatch(), &body); err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		if rv := body.Metadata.ResourceVersion; rv != "" && rv != pod.GetResourceVersion() {
			return true, nil, apierrorsNewConflict(p.GetName())
		}
		before, err := pod.MarshalJSON()
		if err != nil {
			return true, nil, err
		}
		merged, err := strategicpatch.StrategicMergePatch(before, p.GetPatch(), corev1.Pod{})
		if err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		out := &unstructured.Unstructured{}
		if err := out.UnmarshalJSON(merged); err != nil {
			return true, nil, err
		}
		if request == "patch" {
			if k.edit != nil {
				k.edit(out)
			}
			if sidecarImage(out) != sidecarImage(pod) {
				// a new proxy starts healthy
				k.mu.Lock()
				k.drained[p.GetName()] = false
				k.mu.Unlock()
			}
		}
		return true, k.write(out), nil
	})
	return k
}

// add creates pod on the fake cluster, running as the kubelet runs it.
func (k *fakeKubelet) add(pods ...*unstructured.Unstructured) {
	for _, pod := range pods {
		k.write(pod.DeepCopy())
	}
}

// write stores pod with its status as the kubelet makes it and a new
// resourceVersion, lists it in the EndpointSlice, and waits until the
// cache holds it.
func (k *fakeKubelet) write(pod *unstructured.Unstructured) *unstructured.Unstructured {
	k.t.Helper()
	// Pods drained at once are written at once: the EndpointSlice of one
	// must not be built from the Pods as they were before the other's.
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.run(pod)
	k.mu.Lock()
	k.rv++
	pod.SetResourceVersion(strconv.Itoa(100 + k.rv))
	k.mu.Unlock()
	k.store(podsResource, pod)
	k.publish()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := k.m.cache.get("pods", "ns", pod.GetName()); p != nil && p.GetResourceVersion() == pod.GetResourceVersion() {
			return pod
		}
		time.Sleep(time.Millisecond)
	}
	k.t.Errorf("the cache never saw Pod %s at %s", pod.GetName(), pod.GetResourceVersion())
	return pod
}

// publish writes EndpointSlice web-x listing every Pod, ready as it is.
func (k *fakeKubelet) publish() {
	list, err := k.client.Tracker().List(podsResource, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "ns")
	if err != nil {
		k.t.Error(err)
		return
	}
	ready := map[string]bool{}
	for _, item := range list.(*unstructured.UnstructuredList).Items {
		if !k.unlisted {
			ready[item.GetName()] = rollout.PodReady(&item)
		}
	}
	k.store(endpointSliceResource, sliceObject(k.t, ready))
}

// run sets the Pod's container statuses, its Ready condition and any
// resize the kubelet holds pending.
func (k *fakeKubelet) run(pod *unstructured.Unstructured) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ready, pending := true, false
	for field, statusField := range map[string]string{"initContainers": "initContainerStatuses", "containers": "containerStatuses"} {
		running := map[string]any{}
		old, _, _ := unstructured.NestedSlice(pod.Object, "status", statusField)
		for _, item := range old {
			st, _ := item.(map[string]any)
			running[st["name"].(string)] = st["resources"]
		}
		list, _, _ := unstructured.NestedSlice(pod.Object, "spec", field)
		var statuses []any
		for _, item := range list {
			c := item.(map[string]any)
			name, _ := c["name"].(string)
			image, _ := c["image"].(string)
			ok := !k.broken[image] && !(name == sidecarName && k.drained[pod.GetName()])
			resources := runtime.DeepCopyJSONValue(c["resources"])
			if was, found := running[name]; found && k.infeasible != "" && !reflect.DeepEqual(was, resources) {
				resources, pending = was, true
			}
			st := map[string]any{"name": name, "image": image, "ready": ok, "state": map[string]any{"running": map[string]any{}}}
			if resources != nil {
				st["resources"] = resources
			}
			if k.broken[image] {
				st["state"] = map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}}
			}
			ready = ready && ok
			statuses = append(statuses, st)
		}
		_ = unstructured.SetNestedSlice(pod.Object, statuses, "status", statusField)
	}
	conditions := []any{map[string]any{"type": "Ready", "status": map[bool]string{true: "True", false: "False"}[ready]}}
	if pending {
		conditions = append(conditions, map[string]any{"type": "PodResizePending", "status": "True", "reason": "Infeasible", "message": k.infeasible})
	}
	_ = unstructured.SetNestedSlice(pod.Object, conditions, "status", "conditions")
}

// count has StatefulSet name's controller count one more Pod as
// updated.
func (k *fakeKubelet) count(name string) {
	k.countMu.Lock()
	defer k.countMu.Unlock()
	if err := countUpdated(k.client.Tracker(), name); err != nil {
		k.t.Error(err)
	}
}

// store creates obj on the fake cluster, or replaces it.
func (k *fakeKubelet) store(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	tr := k.client.Tracker()
	err := tr.Update(gvr, obj, "ns")
	if apierrors.IsNotFound(err) {
		err = tr.Create(gvr, obj, "ns")
	}
	if err != nil {
		k.t.Error(err)
	}
}

// requests is the log so far.
func (k *fakeKubelet) requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.log...)
}

// stored is the Pod as the fake cluster holds it.
func (k *fakeKubelet) stored(name string) *unstructured.Unstructured {
	k.t.Helper()
	obj, err := k.client.Tracker().Get(podsResource, "ns", name)
	if err != nil {
		k.t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured)
}

// sidecarImage is the image of the Pod's native sidecar envoy.
func sidecarImage(pod *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(pod.Object, "spec", "initContainers")
	for _, item := range list {
		if c, _ := item.(map[string]any); c["name"] == sidecarName {
			image, _ := c["image"].(string)
			return image
		}
	}
	return ""
}
