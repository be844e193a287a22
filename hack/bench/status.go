package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/plugin/cmd"
)

// The sides of the status part: the two commands, and a window of the
// same length as the round's status run with no client at all (the API
// server's own requests).
const (
	sideStatus  = "status"
	sideKubectl = "kubectl"
	sideIdle    = "idle"
)

// statusPodsPer is the number of Pods of every Deployment (through its
// ReplicaSet).
const statusPodsPer = 3

// statusRun is one timed run of a side.
type statusRun struct {
	Round int
	Side  string
	run
	Req requests
}

// statusResult is what part 7 measured and checked.
type statusResult struct {
	Deployments, Pods, Injected, Rounds int
	InjectedNs, PlainNs                 string
	PageSize                            int
	Created                             time.Duration // Deployments, injection, ReplicaSets and Pods
	Runs                                []statusRun
	// From the untimed first runs, whose output was kept and checked.
	StatusBytes, KubectlBytes int
	States                    map[string]int // state -> rows
	PodsCounted, PodsBehind   int
	KubectlItems              map[string]int // kind -> items
	// Expected are the list calls of status: one per page of each kind.
	Expected                      map[call]int
	KubectlPath                   string
	KubectlVersion, ServerVersion string
	SkewWarning                   string
}

// runs is the runs of side, in order.
func (r *statusResult) runs(side string) []statusRun {
	var out []statusRun
	for _, x := range r.Runs {
		if x.Side == side {
			out = append(out, x)
		}
	}
	return out
}

// median is the median wall time and peak RSS of the runs of side.
func (r *statusResult) median(side string) sample {
	var rs []run
	for _, x := range r.runs(side) {
		rs = append(rs, x.run)
	}
	return median(rs)
}

// statusKinds are the resources kubectl inject status lists, as the API
// server's metrics name them, with the number of objects the part creates.
func (r *statusResult) kinds() []struct {
	c call
	n int
} {
	return []struct {
		c call
		n int
	}{
		{call{"LIST", "apps", "deployments", ""}, r.Deployments},
		{call{"LIST", "apps", "statefulsets", ""}, 0},
		{call{"LIST", "apps", "daemonsets", ""}, 0},
		{call{"LIST", "apps", "replicasets", ""}, r.Deployments},
		{call{"LIST", "batch", "cronjobs", ""}, 0},
		{call{"LIST", "batch", "jobs", ""}, 0},
		{call{"LIST", "", "pods", ""}, r.Pods},
		// Current is what the cluster has installed: status reads the
		// installed policies first (none here, one page).
		{call{"LIST", "admissionregistration.k8s.io", "mutatingadmissionpolicies", ""}, 0},
	}
}

// isStatusKind: a request on one of the kinds status lists, any verb.
func (r *statusResult) isStatusKind(c call) bool {
	for _, k := range r.kinds() {
		if k.c.Group == c.Group && k.c.Resource == c.Resource {
			return true
		}
	}
	return false
}

// status is part 7: kubectl inject status -A against kubectl get
// deploy,pods -A on a cluster holding o.statusDeployments Deployments with
// their ReplicaSets and Pods, in interleaved rounds with an idle window
// each, the requests of every run counted and the first outputs checked.
func (e *env) status() error {
	o := e.opts
	n := o.statusDeployments
	res := &statusResult{Deployments: n, Pods: n * statusPodsPer, Injected: n / 2, Rounds: o.statusRounds,
		InjectedNs: "status-injected", PlainNs: "status-plain", PageSize: statusPageSize()}
	res.Expected = map[call]int{}
	for _, k := range res.kinds() {
		res.Expected[k.c] = max(1, (k.n+res.PageSize-1)/res.PageSize)
	}

	kubectl, err := testbin.FindTool("kubectl")
	if err != nil {
		return err
	}
	res.KubectlPath = kubectl
	res.KubectlVersion = kubectlVersion(kubectl)
	if e.report.kubectlVersion == "" {
		e.report.kubectlVersion = res.KubectlVersion
	}
	tmpl, err := deploymentTemplate()
	if err != nil {
		return err
	}
	replicas := int32(statusPodsPer)
	tmpl.Spec.Replicas = &replicas

	c, _, cs, err := startCluster("status", "--disable-admission-plugins=ServiceAccount")
	if err != nil {
		return err
	}
	defer c.Stop()
	ctx := context.Background()
	kc := c.AdminKubeconfig

	// kubectl version with the server: its skew warning goes in the report.
	out, _ := exec.Command(kubectl, "version", "--kubeconfig", kc).CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "Server Version:"):
			res.ServerVersion = strings.TrimSpace(strings.TrimPrefix(l, "Server Version:"))
		case strings.HasPrefix(l, "WARNING:"):
			res.SkewWarning = strings.TrimSpace(strings.TrimPrefix(l, "WARNING:"))
		}
	}

	t := time.Now()
	if err := createDeployments(ctx, cs, tmpl, res.InjectedNs, res.Injected); err != nil {
		return err
	}
	if err := createDeployments(ctx, cs, tmpl, res.PlainNs, n-res.Injected); err != nil {
		return err
	}
	if _, _, err := deployAll(e.plugin, kc, res.InjectedNs); err != nil {
		return err
	}
	if got, err := countInjected(ctx, cs, res.InjectedNs); err != nil {
		return err
	} else if got != res.Injected {
		return fmt.Errorf("status: %d Deployments in %s have the envoy container after kubectl-inject deploy --all, want %d", got, res.InjectedNs, res.Injected)
	}
	for _, ns := range []string{res.InjectedNs, res.PlainNs} {
		list, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if err := createOwnedPods(ctx, cs, list.Items, statusPodsPer); err != nil {
			return err
		}
	}
	res.Created = time.Since(t)
	logf("status: %d Deployments (%d injected), %d ReplicaSets, %d Pods in %s", n, res.Injected, n, res.Pods, secs(res.Created))

	statusSpec := cmdSpec{Name: "kubectl-inject status -A", Args: []string{e.plugin, "status", "-A", "--kubeconfig", kc, "-o", "json"}}
	kubectlSpec := cmdSpec{Name: "kubectl get deploy,pods -A", Args: []string{kubectl, "get", "deploy,pods", "-A", "-o", "json", "--kubeconfig", kc}}

	// First runs, untimed: they warm kubectl's discovery cache and the page
	// cache, and their output is checked.
	statusOut, kubectlOut := filepath.Join(e.tmp, "status.json"), filepath.Join(e.tmp, "kubectl-get.json")
	if _, err := runOnce(statusSpec, statusOut); err != nil {
		return err
	}
	if _, err := runOnce(kubectlSpec, kubectlOut); err != nil {
		return err
	}
	if err := res.checkStatus(statusOut); err != nil {
		return err
	}
	if err := res.checkKubectl(kubectlOut); err != nil {
		return err
	}
	logf("status: output checked: %v, %d Pods counted, %d behind; kubectl: %v", res.States, res.PodsCounted, res.PodsBehind, res.KubectlItems)

	resFile := filepath.Join(e.tmp, "status.rusage")
	for r := 0; r < o.statusRounds; r++ {
		order := []string{sideStatus, sideKubectl}
		if r%2 == 1 {
			order = []string{sideKubectl, sideStatus}
		}
		for _, side := range order {
			spec := statusSpec
			if side == sideKubectl {
				spec = kubectlSpec
			}
			var x run
			req, err := countRequests(ctx, cs, func() (err error) {
				x, err = runTo(spec, os.DevNull, resFile)
				return err
			})
			if err != nil {
				return err
			}
			sr := statusRun{Round: r, Side: side, run: x, Req: req}
			res.Runs = append(res.Runs, sr)
			logf("status round %d, %s: %s %s, %d requests", r, spec.Name, secs(x.Wall), mb(x.MaxRSS), sr.Req.All)
		}
		// The control for the request counts: as long as status took,
		// without any client.
		idle := res.Runs[len(res.Runs)-1].Wall
		if res.Runs[len(res.Runs)-1].Side != sideStatus {
			idle = res.Runs[len(res.Runs)-2].Wall
		}
		req, err := countRequests(ctx, cs, func() error {
			time.Sleep(idle)
			return nil
		})
		if err != nil {
			return err
		}
		res.Runs = append(res.Runs, statusRun{Round: r, Side: sideIdle, run: run{Wall: idle}, Req: req})
	}
	e.report.status = res
	return nil
}

// statusPageSize is the default --chunk-size of kubectl inject status.
func statusPageSize() int {
	c := cmd.NewCmdStatus(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{})
	if f := c.Flags().Lookup("chunk-size"); f != nil {
		if n, err := strconv.Atoi(f.DefValue); err == nil && n > 0 {
			return n
		}
	}
	return 500
}

// callCells is, for every request kind seen in any run, the count per run
// of each side as "n" or "min-max" (a kind missing from a run counts 0).
func (r *statusResult) callCells() ([]call, map[call]map[string]string) {
	seen := map[call]bool{}
	for _, x := range r.Runs {
		for k := range x.Req.Calls {
			seen[k] = true
		}
	}
	for k := range r.Expected {
		seen[k] = true
	}
	var keys []call
	for k := range seen {
		keys = append(keys, k)
	}
	rank := func(c call) int {
		switch {
		case r.isStatusKind(c):
			return 0
		case c.Resource == "":
			return 1
		}
		return 2
	}
	sort.Slice(keys, func(a, b int) bool {
		if ra, rb := rank(keys[a]), rank(keys[b]); ra != rb {
			return ra < rb
		}
		return keys[a].String() < keys[b].String()
	})
	cells := map[call]map[string]string{}
	for _, k := range keys {
		cells[k] = map[string]string{}
		for _, side := range []string{sideStatus, sideKubectl, sideIdle} {
			var counts []int
			for _, x := range r.runs(side) {
				counts = append(counts, x.Req.Calls[k])
			}
			cells[k][side] = rangeOf(counts)
		}
	}
	return keys, cells
}

// rangeOf is "n" when every x is n, else "min-max"; "-" for none.
func rangeOf(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// background is the kinds of request seen in the idle windows: the API
// server's own.
func (r *statusResult) background() map[call]bool {
	m := map[call]bool{}
	for _, x := range r.runs(sideIdle) {
		for k := range x.Req.Calls {
			m[k] = true
		}
	}
	return m
}

// listsOnly reports whether every status run sent exactly the expected
// list calls on the kinds it reads and nothing else: any other request
// counts unless its kind was seen in an idle window too.
func (r *statusResult) listsOnly() (ok bool, lists int, other int) {
	ok = len(r.runs(sideStatus)) > 0
	bg := r.background()
	for _, x := range r.runs(sideStatus) {
		l, o := 0, 0
		for k, n := range x.Req.Calls {
			switch {
			case r.isStatusKind(k) && k.Verb == "LIST":
				l += n
			case bg[k] && !r.isStatusKind(k):
			default:
				o += n
				ok = false
			}
		}
		for k, want := range r.Expected {
			if x.Req.Calls[k] != want {
				ok = false
			}
		}
		lists, other = max(lists, l), max(other, o)
	}
	return ok, lists, other
}
