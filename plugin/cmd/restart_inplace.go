package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// pdbResource is what a PodDisruptionBudget is read as.
var pdbResource = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// upgradeInPlace upgrades the workload's Pods that are behind in place,
// one at a time: each once the workload has all its Pods Ready and the
// PodDisruptionBudgets that select the Pod allow a disruption, with one
// PATCH of its sidecars' images and record (and one of its resize
// subresource when their resources change), then waited on until Ready on
// the new images with the kubelet's resize done. A Pod not Ready within
// the deadline is patched back to the images and resources it had, and
// the step fails naming the Pod, the container and the kubelet's reason. The workload is judged at generation gen or later
// (the one injection wrote, for an OnDelete workload's template).
func (m *restartMover) upgradeInPlace(ctx context.Context, resource string, s rollout.Step, gen int64) error {
	upgraded := map[string]bool{}
	before := "" // the workload's resourceVersion before the last upgrade
	for {
		obj, pods, err := m.inPlaceSubject(ctx, resource, s, gen)
		if err != nil {
			return err
		}
		ups, why := rollout.PodUpgrades(m.injector, obj, pods)
		if why != "" {
			return rollout.Fail(rollout.ReasonNotImageOnly, "%s; --strategy recreate recreates it", why)
		}
		if len(ups) == 0 {
			if len(upgraded) > 0 && rollout.OnDelete(obj) {
				return m.counted(ctx, resource, s, before)
			}
			return nil
		}
		u := ups[0]
		if upgraded[u.Pod] {
			return rollout.Fail(rollout.ReasonInjection, "Pod %s still runs an outdated sidecar after its upgrade in place", u.Pod)
		}
		pod := m.cache.get("pods", s.Namespace, u.Pod)
		if pod == nil {
			continue
		}
		before = obj.GetResourceVersion()
		if label, value, ok := fleet.RevisionLabel(obj); ok && rollout.OnDelete(obj) {
			u.Labels, u.OldLabels = map[string]string{label: value}, map[string]string{label: pod.GetLabels()[label]}
		}
		if err := m.waitBudget(ctx, pod); err != nil {
			return err
		}
		if err := m.patchPod(ctx, u, pod.GetUID(), pod.GetResourceVersion()); err != nil {
			return err
		}
		upgraded[u.Pod] = true
		if err := m.resizePod(ctx, u); err != nil {
			return m.rollBack(ctx, u, false, err)
		}
		if err := m.waitUpgraded(ctx, u, pod.GetUID()); err != nil {
			return m.rollBack(ctx, u, true, err)
		}
	}
}

// inPlaceSubject returns the workload of an upgrade in place once it has
// settled, and its Pods; a Pod without a controller is its own workload,
// upgraded as it is.
func (m *restartMover) inPlaceSubject(ctx context.Context, resource string, s rollout.Step, gen int64) (*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	if s.Kind == "Pod" {
		pod := m.cache.get(resource, s.Namespace, s.Name)
		if pod == nil {
			return nil, nil, rollout.Fail(rollout.ReasonGone, "the Pod was deleted")
		}
		return pod, m.cache.owned(pod).Pods, nil
	}
	obj, err := m.settle(ctx, resource, s, gen, "")
	if err != nil {
		return nil, nil, err
	}
	return obj, m.cache.owned(obj).Pods, nil
}

// patchPod sends the upgrade's one PATCH, refused by the API server if
// the Pod changed since it was read.
func (m *restartMover) patchPod(ctx context.Context, u rollout.Upgrade, uid types.UID, resourceVersion string) error {
	data, err := u.Patch(resourceVersion)
	if err != nil {
		return rollout.Fail(rollout.ReasonInjection, "%w", err)
	}
	out, err := m.client.Resource(gvrOf("pods")).Namespace(u.Namespace).Patch(ctx, u.Pod, types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: m.patcher.FieldManager})
	if err != nil {
		return rollout.Fail(rollout.ReasonAPI, "upgrading Pod %s in place: %w", u.Pod, err)
	}
	if out.GetUID() != uid {
		return rollout.Fail(rollout.ReasonAPI, "upgrading Pod %s in place: the Pod was created again meanwhile", u.Pod)
	}
	return nil
}

// waitUpgraded waits until the Pod is Ready with every changed container
// running its new image, at most the deadline from now.
func (m *restartMover) waitUpgraded(ctx context.Context, u rollout.Upgrade, uid types.UID) error {
	start := m.now()
	for {
		changed := m.cache.next()
		pod := m.cache.get("pods", u.Namespace, u.Pod)
		if pod == nil || pod.GetUID() != uid {
			return fmt.Errorf("deleted while it was upgraded in place")
		}
		resized, infeasible := resizeDone(pod, u)
		if infeasible != "" {
			return fmt.Errorf("the kubelet cannot resize its sidecar: %s", infeasible)
		}
		if rollout.PodReady(pod) && runsImages(pod, u) && resized {
			return nil
		}
		if m.now().Sub(start) > m.deadline {
			return fmt.Errorf("not Ready on its new sidecar within %s: %s", m.deadline, notReadyWhy(pod, u))
		}
		select {
		case <-changed:
		case <-time.After(time.Second):
		case <-ctx.Done():
			return fmt.Errorf("stopped waiting for it to be Ready on its new sidecar: %s", notReadyWhy(pod, u))
		}
	}
}

// resizePod sends the upgrade's resize of its sidecars' resources, if it
// has one.
func (m *restartMover) resizePod(ctx context.Context, u rollout.Upgrade) error {
	data, err := u.ResizePatch()
	if err != nil || data == nil {
		return err
	}
	_, err = m.client.Resource(gvrOf("pods")).Namespace(u.Namespace).Patch(ctx, u.Pod, types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: m.patcher.FieldManager}, "resize")
	if err != nil {
		return fmt.Errorf("resizing its sidecar: %w", err)
	}
	return nil
}

// rollBack patches the Pod back to its old resources (when resized) and
// images after cause, and returns the step's failure naming the Pod, the
// container and the kubelet's reason.
func (m *restartMover) rollBack(ctx context.Context, u rollout.Upgrade, resized bool, cause error) error {
	what := fmt.Sprintf("Pod %s: %v", u.Pod, cause)
	// a context of its own: a rollback is sent even once the run is being
	// stopped.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	pods := m.client.Resource(gvrOf("pods")).Namespace(u.Namespace)
	opts := metav1.PatchOptions{FieldManager: m.patcher.FieldManager}
	var err error
	if data, perr := u.RollbackResizePatch(); perr != nil {
		err = perr
	} else if resized && data != nil {
		if _, rerr := pods.Patch(rctx, u.Pod, types.StrategicMergePatchType, data, opts, "resize"); rerr != nil {
			err = fmt.Errorf("resizing it back: %w", rerr)
		}
	}
	if data, perr := u.RollbackPatch(); perr != nil {
		err = errors.Join(err, perr)
	} else if _, perr := pods.Patch(rctx, u.Pod, types.StrategicMergePatchType, data, opts); perr != nil {
		err = errors.Join(err, perr)
	}
	if err != nil {
		return rollout.Fail(rollout.ReasonRolledBack, "%s; rolling it back failed: %w", what, err)
	}
	return rollout.Fail(rollout.ReasonRolledBack, "%s; rolled back to %s", what, fromImages(u))
}

func fromImages(u rollout.Upgrade) string {
	var out []string
	for _, c := range u.Images {
		out = append(out, c.Container+"="+c.From)
	}
	for _, r := range u.Resources {
		out = append(out, fmt.Sprintf("%s resources %s", r.Container, rollout.FormatResources(r.From)))
	}
	return strings.Join(out, ", ")
}

// runsImages reports a Pod whose container statuses show every changed
// container on its new image (the kubelet may report it fully qualified:
// docker.io/envoyproxy/envoy:v1.41.0).
func runsImages(pod *unstructured.Unstructured, u rollout.Upgrade) bool {
	for _, c := range u.Images {
		st := containerStatus(pod, c.Container, c.Init)
		image, _ := st["image"].(string)
		if st == nil || !(image == c.To || strings.HasSuffix(image, "/"+c.To)) {
			return false
		}
	}
	return true
}

func containerStatus(pod *unstructured.Unstructured, name string, init bool) map[string]any {
	field := "containerStatuses"
	if init {
		field = "initContainerStatuses"
	}
	list, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
	for _, item := range list {
		st, _ := item.(map[string]any)
		if st["name"] == name {
			return st
		}
	}
	return nil
}

// notReadyWhy names the first changed container that is not Ready on its
// new image, and the kubelet's reason (ImagePullBackOff,
// CrashLoopBackOff, a failing readiness probe).
func notReadyWhy(pod *unstructured.Unstructured, u rollout.Upgrade) string {
	for _, c := range u.Images {
		st := containerStatus(pod, c.Container, c.Init)
		ready, _ := st["ready"].(bool)
		if ready && runsImages(pod, rollout.Upgrade{Images: []rollout.ImageChange{c}}) {
			continue
		}
		return fmt.Sprintf("container %s (%s): %s", c.Container, c.To, kubeletReason(st))
	}
	if _, infeasible := resizeDone(pod, u); infeasible != "" {
		return infeasible
	}
	for _, r := range u.Resources {
		if !rollout.RunsResources(containerStatus(pod, r.Container, r.Init), r.To) {
			return fmt.Sprintf("container %s: not resized yet (%s)", r.Container, resizeCondition(pod))
		}
	}
	return "the Pod is not Ready"
}

// resizeDone reports whether the kubelet runs every resized sidecar with
// its new resources, no resize pending or in progress; infeasible is the
// kubelet's message when it will never apply the resize.
func resizeDone(pod *unstructured.Unstructured, u rollout.Upgrade) (done bool, infeasible string) {
	if len(u.Resources) == 0 {
		return true, ""
	}
	if c := activeResize(pod); c != nil {
		if c["type"] == "PodResizePending" && c["reason"] == "Infeasible" {
			msg, _ := c["message"].(string)
			return false, "resize Infeasible: " + msg
		}
		return false, ""
	}
	for _, r := range u.Resources {
		if !rollout.RunsResources(containerStatus(pod, r.Container, r.Init), r.To) {
			return false, ""
		}
	}
	return true, ""
}

// activeResize is the Pod's condition of a resize the kubelet has not
// finished (PodResizePending first, then PodResizeInProgress), nil when
// there is none.
func activeResize(pod *unstructured.Unstructured) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(pod.Object, "status", "conditions")
	for _, typ := range []string{"PodResizePending", "PodResizeInProgress"} {
		for _, item := range conditions {
			if c, _ := item.(map[string]any); c["type"] == typ && c["status"] == "True" {
				return c
			}
		}
	}
	return nil
}

// resizeCondition names the Pod's resize condition, if it has one.
func resizeCondition(pod *unstructured.Unstructured) string {
	c := activeResize(pod)
	if c == nil {
		return "no resize condition"
	}
	reason, _ := c["reason"].(string)
	msg, _ := c["message"].(string)
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", c["type"], reason, msg))
}

// kubeletReason is why the kubelet says a container is not ready.
func kubeletReason(st map[string]any) string {
	if st == nil {
		return "no status yet"
	}
	if r, _, _ := unstructured.NestedString(st, "state", "waiting", "reason"); r != "" {
		if msg, _, _ := unstructured.NestedString(st, "state", "waiting", "message"); msg != "" {
			return r + " (" + msg + ")"
		}
		return r
	}
	if r, _, _ := unstructured.NestedString(st, "lastState", "terminated", "reason"); r != "" {
		return "last terminated: " + r
	}
	if _, ok, _ := unstructured.NestedMap(st, "state", "running"); ok {
		return "running, its readiness probe failing"
	}
	return "not started"
}

// waitBudget waits until every PodDisruptionBudget that selects pod
// allows a disruption.
func (m *restartMover) waitBudget(ctx context.Context, pod *unstructured.Unstructured) error {
	last, lastMessage := m.now(), ""
	for {
		changed := m.cache.next()
		list, err := m.client.Resource(pdbResource).Namespace(pod.GetNamespace()).List(ctx, metav1.ListOptions{})
		if err != nil {
			return rollout.Fail(rollout.ReasonAPI, "listing the PodDisruptionBudgets of Pod %s: %w", pod.GetName(), err)
		}
		message := ""
		for i := range list.Items {
			pdb := &list.Items[i]
			if !selects(pdb, pod) {
				continue
			}
			if allowed, _, _ := unstructured.NestedInt64(pdb.Object, "status", "disruptionsAllowed"); allowed < 1 {
				message = fmt.Sprintf("PodDisruptionBudget %s allows no disruption of Pod %s", pdb.GetName(), pod.GetName())
				break
			}
		}
		if message == "" {
			return nil
		}
		if message != lastMessage {
			last, lastMessage = m.now(), message
		}
		if err := m.pause(ctx, changed, last, lastMessage); err != nil {
			return err
		}
	}
}

// selects reports whether a PodDisruptionBudget's selector matches pod.
func selects(pdb, pod *unstructured.Unstructured) bool {
	raw, ok, _ := unstructured.NestedMap(pdb.Object, "spec", "selector")
	if !ok {
		return false
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
		return false
	}
	// policy/v1: an empty selector selects every Pod of the namespace.
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(pod.GetLabels()))
}
