package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// upgradeInPlace upgrades the workload's Pods that are behind in place,
// in batches as large as the workload's budget allows (rollout.InPlaceBudget,
// the PodDisruptionBudgets that select them, and the fleet's
// --max-in-flight Pods at once), each batch once the workload has all its
// Pods Ready. Each Pod is drained (its proxy out of service, its
// EndpointSlices no longer listing it ready), then gets one PATCH of its
// sidecars' images and record (and one of its resize subresource when
// their resources change), and is waited on until Ready on the new images
// with the kubelet's resize done and listed by its EndpointSlices again. A
// Pod not Ready within the deadline is drained if it serves and patched
// back to the images and resources it had, and the step fails naming the
// Pod, the container and the kubelet's reason. The workload is judged at
// generation gen or later (the one injection wrote, for an OnDelete
// workload's template).
func (m *restartMover) upgradeInPlace(ctx context.Context, resource string, s rollout.Step, gen int64) error {
	upgraded := map[string]bool{}
	before := "" // the workload's resourceVersion before the last batch
	for {
		obj, pods, err := m.inPlaceSubject(ctx, resource, s, gen)
		if err != nil {
			return err
		}
		ups, why := m.decisions.PodUpgrades(m.injector, obj, pods)
		if why != "" {
			return rollout.Fail(rollout.ReasonNotImageOnly, "%s; --strategy recreate recreates it", why)
		}
		if len(ups) == 0 {
			if len(upgraded) > 0 && rollout.OnDelete(obj) {
				return m.counted(ctx, resource, s, before)
			}
			return nil
		}
		budget, _ := rollout.InPlaceBudget(obj)
		var batch []podUpgrade
		for _, u := range ups {
			if len(batch) == budget {
				break
			}
			if upgraded[u.Pod] {
				return rollout.Fail(rollout.ReasonInjection, "Pod %s still runs an outdated sidecar after its upgrade in place", u.Pod)
			}
			pod := m.cache.get("pods", s.Namespace, u.Pod)
			if pod == nil {
				continue
			}
			if label, value, ok := fleet.RevisionLabel(obj); ok && rollout.OnDelete(obj) {
				u.Labels, u.OldLabels = map[string]string{label: value}, map[string]string{label: pod.GetLabels()[label]}
			}
			batch = append(batch, podUpgrade{u, pod})
		}
		if len(batch) == 0 {
			// the Pods behind are not in the cache yet (or gone): wait
			// for it to change before judging again.
			if err := m.sleep(ctx, time.Second); err != nil {
				return rollout.Fail(rollout.ReasonInterrupted, "stopped waiting for the Pods of the %s", s.Kind)
			}
			continue
		}
		before = obj.GetResourceVersion()
		allowed, err := m.waitBudget(ctx, batch)
		if err != nil {
			return err
		}
		batch = batch[:allowed]
		release := m.takeSlots(ctx, len(batch))
		batch = batch[:release.n]
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for i, b := range batch {
			upgraded[b.u.Pod] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = m.upgradePod(ctx, b.u, b.pod)
			}()
		}
		wg.Wait()
		release.done()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
}

// podUpgrade is one Pod of a batch and its upgrade.
type podUpgrade struct {
	u   rollout.Upgrade
	pod *unstructured.Unstructured
}

// upgradePod drains the Pod when a sidecar's image changes (a resize
// alone restarts nothing), changes its sidecars' images (and resizes
// them), and waits until it serves again on them; on failure after the
// images changed it rolls the Pod back.
func (m *restartMover) upgradePod(ctx context.Context, u rollout.Upgrade, pod *unstructured.Unstructured) error {
	d := &drained{pod: pod}
	if restartsProxy(u) {
		var err error
		if d, err = m.drainPod(ctx, pod); err != nil {
			return err
		}
	}
	if err := m.patchDrained(ctx, u, pod, m.drain != nil && restartsProxy(u)); err != nil {
		if rerr := m.restore(ctx, d); rerr != nil {
			return fmt.Errorf("%w; %v", err, rerr)
		}
		return err
	}
	if err := m.resizePod(ctx, u); err != nil {
		return m.rollBack(ctx, u, d, false, err)
	}
	if err := m.waitUpgraded(ctx, u, pod.GetUID()); err != nil {
		return m.rollBack(ctx, u, d, true, err)
	}
	if err := m.waitInService(ctx, d); err != nil {
		return rollout.Fail(rollout.ReasonProgressDeadline, "Pod %s: %v", u.Pod, err)
	}
	return nil
}

// restartsProxy reports an upgrade (or its rollback) that restarts the
// sidecars, so their proxy is drained first: an image changes. A resize
// alone restarts nothing, and a drained proxy would stay out of service.
func restartsProxy(u rollout.Upgrade) bool { return len(u.Images) > 0 }

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

// conflictRetries is how often patchDrained reads the Pod again after
// the API server refused its PATCH for a Pod changed meanwhile.
const conflictRetries = 3

// patchDrained sends the upgrade's PATCH. A Pod that was drained changed
// meanwhile (the kubelet called it not Ready), so it is read again and
// patched at that resourceVersion, once what the upgrade changes is still
// what it was judged on (the sidecars' images and the record); a Pod
// changed there is left to the next run. One not drained is patched at
// the resourceVersion it was judged at, and read again only after a
// conflict.
func (m *restartMover) patchDrained(ctx context.Context, u rollout.Upgrade, pod *unstructured.Unstructured, drained bool) error {
	pods := m.client.Resource(gvrOf("pods")).Namespace(u.Namespace)
	for attempt := 0; ; attempt++ {
		cur := pod // not drained: as it was judged, read again only after a conflict
		if drained || attempt > 0 {
			var err error
			if cur, err = pods.Get(ctx, u.Pod, metav1.GetOptions{}); err != nil {
				return rollout.Fail(rollout.ReasonAPI, "reading Pod %s again after its drain: %w", u.Pod, err)
			}
		}
		if cur.GetUID() != pod.GetUID() {
			return rollout.Fail(rollout.ReasonGone, "Pod %s was created again meanwhile", u.Pod)
		}
		if why := changedSince(cur, u); why != "" {
			return rollout.Fail(rollout.ReasonInjection, "Pod %s changed since it was judged (%s); run restart again", u.Pod, why)
		}
		err := m.patchPod(ctx, u, pod.GetUID(), cur.GetResourceVersion())
		if err == nil || !apierrors.IsConflict(err) || attempt == conflictRetries {
			return err
		}
	}
}

// changedSince names what of the Pod an upgrade judged on has changed
// since: a changed sidecar's image, or the record; "" when nothing has.
func changedSince(pod *unstructured.Unstructured, u rollout.Upgrade) string {
	for _, c := range u.Images {
		field := "containers"
		if c.Init {
			field = "initContainers"
		}
		list, _, _ := unstructured.NestedSlice(pod.Object, "spec", field)
		image := ""
		for _, item := range list {
			if m, _ := item.(map[string]any); m["name"] == c.Container {
				image, _ = m["image"].(string)
			}
		}
		if image != c.From {
			return fmt.Sprintf("container %s runs %q, was %q", c.Container, image, c.From)
		}
	}
	if pod.GetAnnotations()[u.RecordKey] != u.OldRecord {
		return "its record " + u.RecordKey + " changed"
	}
	return ""
}

// patchPod sends the upgrade's one PATCH, refused by the API server if
// the Pod changed since resourceVersion.
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
		case <-m.tick(time.Second):
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

// rollBack drains the Pod when it serves on a new sidecar image that the
// rollback restarts, patches it back to its old resources (when resized)
// and images after cause, waits until it serves again on them, and
// returns the step's failure naming the Pod, the container and the
// kubelet's reason. d is the upgrade's drain.
func (m *restartMover) rollBack(ctx context.Context, u rollout.Upgrade, d *drained, resized bool, cause error) error {
	what := fmt.Sprintf("Pod %s: %v", u.Pod, cause)
	// a context of its own: a rollback is sent even once the run is being
	// stopped.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.deadline+30*time.Second)
	defer cancel()
	var err error
	if pod := m.cache.get("pods", u.Namespace, u.Pod); pod != nil && rollout.PodReady(pod) && restartsProxy(u) && m.drain != nil {
		// it serves on the new sidecar (Ready on it, a resize the kubelet
		// refused): out of service first, as for the upgrade. A rollback
		// of resources alone restarts no proxy, which would then stay
		// drained: it is not drained.
		if again, derr := m.drainPod(rctx, pod); derr != nil {
			err = fmt.Errorf("draining it: %w", derr)
		} else {
			d = again
		}
	}
	pods := m.client.Resource(gvrOf("pods")).Namespace(u.Namespace)
	opts := metav1.PatchOptions{FieldManager: m.patcher.FieldManager}
	if data, perr := u.RollbackResizePatch(); perr != nil {
		err = errors.Join(err, perr)
	} else if resized && data != nil {
		if _, rerr := pods.Patch(rctx, u.Pod, types.StrategicMergePatchType, data, opts, "resize"); rerr != nil {
			err = errors.Join(err, fmt.Errorf("resizing it back: %w", rerr))
		}
	}
	data, perr := u.RollbackPatch()
	if perr == nil {
		_, perr = pods.Patch(rctx, u.Pod, types.StrategicMergePatchType, data, opts)
	}
	err = errors.Join(err, perr)
	if err != nil {
		return rollout.Fail(rollout.ReasonRolledBack, "%s; rolling it back failed: %w", what, err)
	}
	if d != nil && d.pod != nil && d.listed > 0 {
		back := u
		back.Images = nil
		for _, c := range u.Images {
			back.Images = append(back.Images, rollout.ImageChange{Container: c.Container, Init: c.Init, From: c.To, To: c.From})
		}
		back.Resources = nil
		if werr := m.waitUpgraded(rctx, back, d.pod.GetUID()); werr != nil {
			return rollout.Fail(rollout.ReasonRolledBack, "%s; rolled back to %s, but %v", what, fromImages(u), werr)
		}
		if werr := m.waitInService(rctx, d); werr != nil {
			return rollout.Fail(rollout.ReasonRolledBack, "%s; rolled back to %s, but %v", what, fromImages(u), werr)
		}
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
