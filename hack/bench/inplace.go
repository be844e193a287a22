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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/internal/testbin"
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

	proxy, kc, err := e.countingKubeconfig(c, "inplace")
	if err != nil {
		return err
	}
	defer proxy.close()

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
