package main

// Part 11's view of the Pods: what each phase left, and a watch of
// when each Pod was pending on its new image.

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// judge lists the Pods of ns after a phase and counts, against the UIDs
// by name of before it, those recreated, kept, Ready on image, and left
// over from before.
func judge(ctx context.Context, cs kubernetes.Interface, ns string, before map[string]types.UID, image string, ph *inplacePhase) error {
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	old := map[types.UID]bool{}
	for _, uid := range before {
		old[uid] = true
	}
	ph.Pods = 0
	for i := range l.Items {
		p := &l.Items[i]
		if old[p.UID] {
			if p.DeletionTimestamp == nil {
				ph.Kept++
			} else {
				ph.OldLeft++
			}
		} else {
			ph.Recreated++
		}
		if p.DeletionTimestamp == nil {
			ph.Pods++
			if onImage(p, image) {
				ph.OnNewImage++
			}
		}
	}
	return nil
}

// onImage reports whether the Pod is Ready with image in its spec and in
// its containers' statuses, and no other sidecar image: what a kubelet
// (here kwok) reports once it runs it.
func onImage(p *corev1.Pod, image string) bool {
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready || p.DeletionTimestamp != nil {
		return false
	}
	specHas, statusHas := false, false
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Image == image {
			specHas = true
		}
	}
	for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if s.Image == image {
			statusHas = true
		}
	}
	return specHas && statusHas
}

// specHasImage reports whether a container or init container of the Pod
// asks for image.
func specHasImage(p *corev1.Pod, image string) bool {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Image == image {
			return true
		}
	}
	return false
}

// defaultSidecarImage is the image of the embedded default template (what
// policy --apply injects without --image).
func defaultSidecarImage() (string, error) {
	tpl := inject.DefaultTemplate()
	for _, c := range append(tpl.InitContainers, tpl.Containers...) {
		for i := 0; i+1 < len(c.Content); i += 2 {
			if c.Content[i].Value == "image" {
				return c.Content[i+1].Value, nil
			}
		}
	}
	return "", fmt.Errorf("the embedded default template has no image")
}

// createReplicas creates a Deployment of replicas Pods, with the default
// strategy (RollingUpdate, maxSurge and maxUnavailable 25%).
func createReplicas(ctx context.Context, dyn dynamic.Interface, ns, name string, replicas int) error {
	labels := map[string]any{"app": name}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27", "ports": []any{map[string]any{"containerPort": int64(8080)}}}}},
			},
		},
	}}
	_, err := dyn.Resource(benchDeployments).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// waitFleet waits until every Deployment of ns has rolled out and the
// namespace holds exactly pods Pods, none terminating, all Ready on
// image.
func waitFleet(ctx context.Context, dyn dynamic.Interface, tr *podTracker, ns string, pods int, image string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pending, _, err := deploymentsPending(ctx, dyn, ns)
		if err != nil {
			return err
		}
		n, ready := tr.count(image)
		if pending == 0 && n == pods && ready == pods {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: after %s, %d Deployments still rolling, %d Pods, %d of %d Ready on %s", ns, timeout, pending, n, ready, pods, image)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// podTracker follows the Pods of a namespace with a watch of its own
// (an informer: one LIST, then WATCHes), for the peaks of a phase and the
// end of a rollout.
type podTracker struct {
	mu       sync.Mutex
	pods     map[types.UID]*corev1.Pod
	image    string                  // the phase's new image
	pending  map[types.UID]time.Time // spec on image, not yet Ready on it: since when
	done     []time.Duration         // how long the Pods no longer pending were
	peakPend int
	peakPods int
	stopCh   chan struct{}
}

// trackPods starts a tracker of the Pods of ns and waits for its first
// list.
func trackPods(ctx context.Context, cs kubernetes.Interface, ns string) (*podTracker, error) {
	t := &podTracker{pods: map[types.UID]*corev1.Pod{}, pending: map[types.UID]time.Time{}, stopCh: make(chan struct{})}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.set(obj, false) },
		UpdateFunc: func(_, obj any) { t.set(obj, false) },
		DeleteFunc: func(obj any) { t.set(obj, true) },
	}); err != nil {
		return nil, err
	}
	go inf.Run(t.stopCh)
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		t.stop()
		return nil, fmt.Errorf("the watch of the Pods of %s did not sync", ns)
	}
	return t, nil
}

func (t *podTracker) stop() { close(t.stopCh) }

// set records an added, changed or deleted Pod.
func (t *podTracker) set(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if deleted {
		delete(t.pods, p.UID)
		delete(t.pending, p.UID)
		return
	}
	t.pods[p.UID] = p
	since, was := t.pending[p.UID]
	switch {
	case t.image == "" || !specHasImage(p, t.image) || p.DeletionTimestamp != nil:
		delete(t.pending, p.UID)
	case !onImage(p, t.image):
		if !was {
			t.pending[p.UID] = time.Now()
		}
	case was:
		t.done = append(t.done, time.Since(since))
		delete(t.pending, p.UID)
	}
	t.peakPend = max(t.peakPend, len(t.pending))
	t.peakPods = max(t.peakPods, len(t.pods))
}

// phase starts a phase towards image: the peaks start again.
func (t *podTracker) phase(image string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.image, t.pending, t.done, t.peakPend, t.peakPods = image, map[types.UID]time.Time{}, nil, 0, len(t.pods)
}

// peaks are the phase's most Pods pending on its image, most Pods, and
// how long each Pod that is no longer pending was.
func (t *podTracker) peaks() (pending, pods int, done []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.peakPend, t.peakPods, append([]time.Duration(nil), t.done...)
}

// uids maps the Pods that are not terminating by name to their UIDs.
func (t *podTracker) uids() map[string]types.UID {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]types.UID{}
	for _, p := range t.pods {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.UID
		}
	}
	return out
}

// count is the number of Pods not terminating, and of those Ready on
// image.
func (t *podTracker) count(image string) (pods, ready int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		pods++
		if onImage(p, image) {
			ready++
		}
	}
	return pods, ready
}

// waitGone waits until no Pod of before is left, terminating ones
// included, as the watch sees them.
func (t *podTracker) waitGone(before map[string]types.UID, timeout time.Duration) error {
	old := map[types.UID]bool{}
	for _, uid := range before {
		old[uid] = true
	}
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		left := 0
		for uid := range t.pods {
			if old[uid] {
				left++
			}
		}
		t.mu.Unlock()
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d Pods of before the rollout restart still exist after %s", left, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstLine keeps what is written to it and when a line holding marker
// was first written, from start. (It has no ReadFrom: io.Copy, which
// exec feeds it with, must call Write.)
type firstLine struct {
	buf    bytes.Buffer
	marker string
	start  time.Time
	at     time.Duration
}

func (w *firstLine) Write(p []byte) (int, error) {
	if w.at == 0 && w.marker != "" && bytes.Contains(p, []byte(w.marker)) {
		w.at = time.Since(w.start)
	}
	return w.buf.Write(p)
}

func (w *firstLine) String() string { return w.buf.String() }
