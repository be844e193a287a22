package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// Part 11: a fleet of -inplace-deployments Deployments of
// -inplace-replicas Pods each (1,000 Pods by default), injected at
// admission, on a cluster that runs its control plane (test/cluster with
// kwok Nodes), brought to a new sidecar image twice in the same run:
//
//  1. in place: after `policy --apply --image registry.example/envoy:b`,
//     `kubectl-inject restart -n NS --drain=false --max-in-flight M -o
//     json` (kwok runs no proxy to drain), which PATCHes each Pod's
//     sidecar image and waits for it Ready on it: no Pod is created. M
//     bounds both the workloads moving at once and the Pods being upgraded
//     at once across the fleet; each Deployment's own budget is its
//     maxUnavailable (default 25%: 25 Pods of 100).
//  2. rollout restart: after `policy --apply --image
//     registry.example/envoy:c`, `kubectl rollout restart deploy/NAME` for
//     every Deployment, then `kubectl rollout status deploy/NAME` for
//     each, then until no Pod of before the restart is left (terminating
//     ones included, which is when kubectl inject restart calls a rollout
//     done): every Pod is recreated by the controllers.
//
// Both clients talk to the API server through the counting proxy of part
// 9; the API server's apiserver_request_total also gives every client's
// requests (controllers, scheduler, kwok) over each phase. A watch of the
// bench's own (not counted by the proxy) follows the Pods: how many are
// being upgraded or exist at once.

const (
	inplaceImageB = "registry.example/envoy:b"
	inplaceImageC = "registry.example/envoy:c"
	// kwokPodsPerNode is the pod capacity test/cluster's kwok stages give
	// every Node (allocatable pods: 1k); the part starts enough Nodes for
	// twice the fleet (a rollout's surge and terminating Pods).
	kwokPodsPerNode = 1000
)

// inplacePhase is one of the two ways to the new image.
type inplacePhase struct {
	Wall time.Duration
	// Requests by method (WATCH for watches), as the counting proxy saw
	// them: the client's alone.
	Requests map[string]int
	// Server is apiserver_request_total over the phase: every client's.
	Server requests
	// Pods is the fleet's size; Recreated the Pods of after the phase
	// whose UID is new, Kept those with the UID they had; OnNewImage the
	// Pods Ready with the new image in spec and status; OldLeft the Pods
	// of before that still exist (terminating ones included).
	Pods, Recreated, Kept, OnNewImage, OldLeft int
	// PeakUpgrading is the most Pods at once whose spec carries the new
	// image and which are not yet Ready on it (in place: Pods being
	// upgraded; rollout: new Pods not Ready yet); PeakPods the most Pods
	// at once, terminating ones included.
	PeakUpgrading, PeakPods int
	// Pending is, for each Pod that reached the new image in the phase,
	// how long it was pending (from the first event of it with the new
	// image in its spec to the first Ready on it in its status), as the
	// watch saw it.
	Pending []time.Duration
	// FirstStarted is when the client's first workload started (restart's
	// first "started" line on stderr), from the start of the phase; 0
	// when not known.
	FirstStarted time.Duration
	// ClientCPU is the user + system CPU time of the client's processes.
	ClientCPU time.Duration
}

// inplaceResult is part 11's measurements.
type inplaceResult struct {
	Deployments, Replicas, MaxInFlight, Nodes int
	KubectlVersion                            string
	ImageA                                    string
	// Budget is each Deployment's own in-place budget
	// (rollout.InPlaceBudget) and why.
	Budget    int
	BudgetWhy string
	// Setup is how long the fleet took to be created and Ready.
	Setup time.Duration
	// InPlace is kubectl inject restart; Rollout is kubectl rollout
	// restart + status.
	InPlace, Rollout inplacePhase
	// From restart's -o json report: the most workloads moving at once,
	// each workload's seconds, and the strategies and actions of its items.
	ReportMaxInFlight int
	WorkloadSeconds   []float64
	Strategies        map[string]int // "action/strategy" -> items
	// StatusDone is when the last kubectl rollout status exited, from the
	// start of the rollout phase (Wall also waits for the old Pods to go).
	StatusDone time.Duration
}

// restartJSON is what the part reads of restart -o json.
type restartJSON struct {
	MaxInFlight int `json:"maxInFlight"`
	Done        int `json:"done"`
	Failed      int `json:"failed"`
	NotStarted  int `json:"notStarted"`
	Reported    int `json:"reported"`
	Items       []struct {
		Namespace      string  `json:"namespace"`
		Kind           string  `json:"kind"`
		Name           string  `json:"name"`
		Action         string  `json:"action"`
		Strategy       string  `json:"strategy"`
		StrategyReason string  `json:"strategyReason"`
		PodsInPlace    int     `json:"podsInPlace"`
		State          string  `json:"state"`
		Seconds        float64 `json:"seconds"`
		Reason         string  `json:"reason"`
		Message        string  `json:"message"`
	} `json:"items"`
}

// inplaceNodes is how many kwok Nodes the part asks for: room for twice
// the fleet, at least cluster.DefaultNodes.
func inplaceNodes(pods int) int {
	n := (2*pods + kwokPodsPerNode - 1) / kwokPodsPerNode
	if n < cluster.DefaultNodes {
		n = cluster.DefaultNodes
	}
	return n
}

// inplace runs part 11.
func (e *env) inplace() error {
	o := e.opts
	total := o.inplaceDeployments * o.inplaceReplicas
	res := &inplaceResult{Deployments: o.inplaceDeployments, Replicas: o.inplaceReplicas, MaxInFlight: o.inplaceMaxInFlight, Nodes: inplaceNodes(total), Strategies: map[string]int{}}
	ctx := context.Background()
	startCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	t0 := time.Now()
	c, err := cluster.StartWith(startCtx, cluster.Options{ControlPlane: true, Nodes: res.Nodes})
	cancel()
	if err != nil {
		return fmt.Errorf("start the test cluster with its control plane: %w", err)
	}
	defer c.Stop()
	logf("inplace: cluster with control plane and %d kwok Nodes (%d Pods each) up in %s", res.Nodes, kwokPodsPerNode, time.Since(t0).Round(100*time.Millisecond))
	kubectl, err := testbin.FindTool("kubectl.v1.37.2")
	if err != nil {
		return err
	}
	res.KubectlVersion = kubectlVersion(kubectl)
	if e.report.kubectlVersion == "" {
		e.report.kubectlVersion = res.KubectlVersion
	}
	cfg := c.AdminConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if res.ImageA, err = defaultSidecarImage(); err != nil {
		return err
	}

	const ns = "bench-inplace"
	if err := e.plugins(c.AdminKubeconfig, "policy", "--apply"); err != nil {
		return err
	}
	if err := benchNamespace(ctx, dyn, ns); err != nil {
		return err
	}
	if err := e.plugins(c.AdminKubeconfig, "enable", ns); err != nil {
		return err
	}
	if err := waitInjecting(ctx, dyn, ns, res.ImageA); err != nil {
		return err
	}
	tr, err := trackPods(ctx, cs, ns)
	if err != nil {
		return err
	}
	defer tr.stop()
	t1 := time.Now()
	names := make([]string, o.inplaceDeployments)
	for i := range names {
		names[i] = fmt.Sprintf("app-%03d", i)
	}
	if err := parallel(len(names), 8, func(i int) error {
		return createReplicas(ctx, dyn, ns, names[i], o.inplaceReplicas)
	}); err != nil {
		return err
	}
	if err := waitFleet(ctx, dyn, tr, ns, total, res.ImageA, 15*time.Minute); err != nil {
		return err
	}
	res.Setup = time.Since(t1)
	logf("inplace: %d Deployments of %d Pods Ready on %s in %s", o.inplaceDeployments, o.inplaceReplicas, res.ImageA, res.Setup.Round(100*time.Millisecond))
	d, err := dyn.Resource(benchDeployments).Namespace(ns).Get(ctx, names[0], metav1.GetOptions{})
	if err != nil {
		return err
	}
	d.SetKind("Deployment")
	res.Budget, res.BudgetWhy = rollout.InPlaceBudget(d)

	proxy, err := newCountingProxy(c)
	if err != nil {
		return err
	}
	defer proxy.close()
	kc := filepath.Join(e.tmp, "inplace.kubeconfig")
	if err := os.WriteFile(kc, []byte(proxy.kubeconfig()), 0o600); err != nil {
		return err
	}

	// 1. in place
	if err := e.plugins(c.AdminKubeconfig, "policy", "--apply", "--image", inplaceImageB); err != nil {
		return err
	}
	if err := waitInjecting(ctx, dyn, ns, inplaceImageB); err != nil {
		return err
	}
	before := tr.uids()
	var stdout bytes.Buffer
	var stderr firstLine
	if err := e.inplacePhase(ctx, cs, proxy, tr, &res.InPlace, inplaceImageB, func(start time.Time) error {
		cmd := exec.Command(e.plugin, "restart", "-n", ns, "--drain=false", "--max-in-flight", fmt.Sprint(o.inplaceMaxInFlight), "-o", "json", "--kubeconfig", kc)
		stderr.marker, stderr.start = " started (", start
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		res.InPlace.FirstStarted = stderr.at
		if cmd.ProcessState != nil {
			res.InPlace.ClientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		// kept with -keep
		_ = os.WriteFile(filepath.Join(e.tmp, "inplace-restart.stderr"), stderr.buf.Bytes(), 0o644)
		if err != nil {
			return fmt.Errorf("kubectl-inject restart -n %s --drain=false --max-in-flight %d -o json: %v\nstderr (last lines):\n%s\nstdout (last lines):\n%s", ns, o.inplaceMaxInFlight, err, tailLines(stderr.String(), 30), tailLines(stdout.String(), 30))
		}
		return nil
	}); err != nil {
		return err
	}
	var rep restartJSON
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return fmt.Errorf("restart -o json: %w\n%s", err, tailLines(stdout.String(), 20))
	}
	res.ReportMaxInFlight = rep.MaxInFlight
	for _, it := range rep.Items {
		res.Strategies[it.Action+"/"+it.Strategy]++
		if it.State == rollout.StateDone {
			res.WorkloadSeconds = append(res.WorkloadSeconds, it.Seconds)
		}
	}
	if rep.Done != o.inplaceDeployments || rep.Failed != 0 {
		return fmt.Errorf("restart exited 0 but brought %d of %d Deployments to current (%d failed, %d not started)\nstderr (last lines):\n%s", rep.Done, o.inplaceDeployments, rep.Failed, rep.NotStarted, tailLines(stderr.String(), 30))
	}
	if err := judge(ctx, cs, ns, before, inplaceImageB, &res.InPlace); err != nil {
		return err
	}
	logf("inplace: kubectl inject restart upgraded %d Pods in place in %s: %d kept their UID, %d on %s, %v (peak %d being upgraded at once)",
		total, res.InPlace.Wall.Round(time.Millisecond), res.InPlace.Kept, res.InPlace.OnNewImage, inplaceImageB, res.InPlace.Requests, res.InPlace.PeakUpgrading)
	if res.InPlace.Recreated != 0 || res.InPlace.OnNewImage != total {
		logf("inplace: WARNING: in place should recreate no Pod and leave all %d on %s: %d recreated, %d on it\n%s", total, inplaceImageB, res.InPlace.Recreated, res.InPlace.OnNewImage, tailLines(stderr.String(), 30))
	}

	// 2. rollout restart, all Deployments restarted, then waited on
	if err := e.plugins(c.AdminKubeconfig, "policy", "--apply", "--image", inplaceImageC); err != nil {
		return err
	}
	if err := waitInjecting(ctx, dyn, ns, inplaceImageC); err != nil {
		return err
	}
	before = tr.uids()
	t2 := time.Now()
	if err := e.inplacePhase(ctx, cs, proxy, tr, &res.Rollout, inplaceImageC, func(time.Time) error {
		for _, verb := range []string{"restart", "status"} {
			for _, name := range names {
				args := []string{"rollout", verb, "deploy/" + name, "-n", ns, "--kubeconfig", kc}
				if verb == "status" {
					args = append(args, "--timeout=15m")
				}
				cmd := exec.Command(kubectl, args...)
				out, err := cmd.CombinedOutput()
				if err != nil {
					return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				res.Rollout.ClientCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
		}
		res.StatusDone = time.Since(t2)
		return tr.waitGone(before, 10*time.Minute)
	}); err != nil {
		return err
	}
	if err := judge(ctx, cs, ns, before, inplaceImageC, &res.Rollout); err != nil {
		return err
	}
	logf("inplace: kubectl rollout restart + status recreated %d Pods in %s (status done at %s), %v (peak %d Pods at once)",
		res.Rollout.Recreated, res.Rollout.Wall.Round(time.Millisecond), res.StatusDone.Round(time.Millisecond), res.Rollout.Requests, res.Rollout.PeakPods)
	e.inplaceRes = res
	return nil
}

// inplacePhase runs f as a phase towards image: its wall time, the
// proxy's counts and apiserver_request_total around it, the tracker's
// peaks.
func (e *env) inplacePhase(ctx context.Context, cs kubernetes.Interface, proxy *countingProxy, tr *podTracker, ph *inplacePhase, image string, f func(start time.Time) error) error {
	b, err := scrape(ctx, cs)
	if err != nil {
		return err
	}
	proxy.reset()
	tr.phase(image)
	t := time.Now()
	if err := f(t); err != nil {
		return err
	}
	ph.Wall = time.Since(t)
	ph.Requests = proxy.counts()
	ph.PeakUpgrading, ph.PeakPods, ph.Pending = tr.peaks()
	a, err := scrape(ctx, cs)
	if err != nil {
		return err
	}
	ph.Server = a.minus(b)
	return nil
}

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
