package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/test/cluster"
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

func (r *statusResult) runs(side string) []statusRun {
	var out []statusRun
	for _, x := range r.Runs {
		if x.Side == side {
			out = append(out, x)
		}
	}
	return out
}

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

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t0 := time.Now()
	c, err := cluster.Start(ctx, "--disable-admission-plugins=ServiceAccount")
	cancel()
	if err != nil {
		return fmt.Errorf("start the test cluster: %w", err)
	}
	defer c.Stop()
	logf("status: cluster up in %s at %s", time.Since(t0).Round(100*time.Millisecond), c.URL)
	cfg := c.AdminConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx = context.Background()
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
	inj := exec.Command(e.plugin, "deploy", "--all", "-n", res.InjectedNs, "--kubeconfig", kc)
	var stderr bytes.Buffer
	inj.Stderr = &stderr
	if err := inj.Run(); err != nil {
		return fmt.Errorf("kubectl-inject deploy --all -n %s: %v\n%s", res.InjectedNs, err, tailLines(stderr.String(), 20))
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
			before, err := scrape(ctx, cs)
			if err != nil {
				return err
			}
			x, err := runTo(spec, os.DevNull, resFile)
			if err != nil {
				return err
			}
			after, err := scrape(ctx, cs)
			if err != nil {
				return err
			}
			sr := statusRun{Round: r, Side: side, run: x, Req: after.minus(before)}
			res.Runs = append(res.Runs, sr)
			logf("status round %d, %s: %s %s, %d requests", r, spec.Name, secs(x.Wall), mb(x.MaxRSS), sr.Req.All)
		}
		// The control for the request counts: as long as status took,
		// without any client.
		idle := res.Runs[len(res.Runs)-1].Wall
		if res.Runs[len(res.Runs)-1].Side != sideStatus {
			idle = res.Runs[len(res.Runs)-2].Wall
		}
		before, err := scrape(ctx, cs)
		if err != nil {
			return err
		}
		time.Sleep(idle)
		after, err := scrape(ctx, cs)
		if err != nil {
			return err
		}
		res.Runs = append(res.Runs, statusRun{Round: r, Side: sideIdle, run: run{Wall: idle}, Req: after.minus(before)})
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

// checkStatus checks the JSON of kubectl inject status -A against what the
// part created: one row per Deployment (no Pod rows: every Pod has a
// controller), current in the injected namespace and not-injected in the
// other, each with its Pods counted and none behind (the Pods were made
// from the template as it is).
func (r *statusResult) checkStatus(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r.StatusBytes = len(data)
	var list struct {
		Kind  string      `json:"kind"`
		Items []fleet.Row `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("status -A -o json: %w", err)
	}
	r.States = map[string]int{}
	var problems []string
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	if list.Kind != "InjectionStatusList" {
		bad("kind %q, want InjectionStatusList", list.Kind)
	}
	deployments := 0
	for _, row := range list.Items {
		r.States[row.State]++
		r.PodsCounted += row.Pods
		r.PodsBehind += row.PodsBehind
		if row.Kind != "Deployment" {
			bad("unexpected row %s/%s (%s, bare %v)", row.Namespace, row.Ref(), row.State, row.Bare)
			continue
		}
		deployments++
		want := fleet.NotInjected
		if row.Namespace == r.InjectedNs {
			want = fleet.Current
		}
		if row.State != want || row.Pods != statusPodsPer || row.PodsBehind != 0 {
			bad("%s/%s: state %s, pods %d, podsBehind %d; want %s, %d, 0", row.Namespace, row.Ref(), row.State, row.Pods, row.PodsBehind, want, statusPodsPer)
		}
	}
	if len(list.Items) != r.Deployments || deployments != r.Deployments {
		bad("%d items, %d of them Deployments; want %d Deployments and nothing else", len(list.Items), deployments, r.Deployments)
	}
	if r.States[fleet.Current] != r.Injected || r.States[fleet.NotInjected] != r.Deployments-r.Injected {
		bad("%d current and %d not-injected, want %d and %d", r.States[fleet.Current], r.States[fleet.NotInjected], r.Injected, r.Deployments-r.Injected)
	}
	if r.PodsCounted != r.Pods || r.PodsBehind != 0 {
		bad("pods sum to %d (want %d), podsBehind to %d (want 0)", r.PodsCounted, r.Pods, r.PodsBehind)
	}
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("... %d more", len(problems)-5))
		}
		return fmt.Errorf("kubectl inject status -A -o json is not what was created:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// checkKubectl checks that kubectl get printed every Deployment and Pod.
func (r *statusResult) checkKubectl(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r.KubectlBytes = len(data)
	var list struct {
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("kubectl get -o json: %w", err)
	}
	r.KubectlItems = map[string]int{}
	for _, it := range list.Items {
		r.KubectlItems[it.Kind]++
	}
	if r.KubectlItems["Deployment"] != r.Deployments || r.KubectlItems["Pod"] != r.Pods || len(list.Items) != r.Deployments+r.Pods {
		return fmt.Errorf("kubectl get deploy,pods -A printed %v, want %d Deployments and %d Pods", r.KubectlItems, r.Deployments, r.Pods)
	}
	return nil
}

// createOwnedPods creates, for every Deployment, the ReplicaSet and the Pods
// its controllers would (no controller-manager runs): the ReplicaSet named
// after the template's hash, labeled pod-template-hash and controlled by
// the Deployment, and pods Pods from its template controlled by it. 32
// Deployments at a time.
func createOwnedPods(ctx context.Context, cs kubernetes.Interface, deps []appsv1.Deployment, pods int) error {
	work := make(chan *appsv1.Deployment)
	errs := make(chan error, len(deps))
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				rs, err := cs.AppsV1().ReplicaSets(d.Namespace).Create(ctx, replicaSetFor(d, pods), metav1.CreateOptions{})
				if err != nil {
					errs <- fmt.Errorf("create the ReplicaSet of %s/%s: %w", d.Namespace, d.Name, err)
					continue
				}
				for i := 0; i < pods; i++ {
					if _, err := cs.CoreV1().Pods(d.Namespace).Create(ctx, podFor(rs), metav1.CreateOptions{}); err != nil {
						errs <- fmt.Errorf("create a Pod of %s/%s: %w", rs.Namespace, rs.Name, err)
						break
					}
				}
			}
		}()
	}
	for i := range deps {
		work <- &deps[i]
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// podTemplateHash is a stand-in for the Deployment controller's hash of the
// template (FNV-32a, encoded the same way; of the JSON, not of its deep
// printing).
func podTemplateHash(t *corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	b, _ := json.Marshal(t)
	h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// replicaSetFor is the first ReplicaSet of d as the Deployment controller
// makes it.
func replicaSetFor(d *appsv1.Deployment, replicas int) *appsv1.ReplicaSet {
	hash := podTemplateHash(&d.Spec.Template)
	tmpl := d.Spec.Template.DeepCopy()
	tmpl.Labels = copyMap(tmpl.Labels)
	tmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	sel := d.Spec.Selector.DeepCopy()
	sel.MatchLabels = copyMap(sel.MatchLabels)
	sel.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	r := int32(replicas)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:      d.Name + "-" + hash,
			Namespace: d.Namespace,
			Labels:    copyMap(tmpl.Labels),
			Annotations: map[string]string{
				"deployment.kubernetes.io/desired-replicas": fmt.Sprint(replicas),
				"deployment.kubernetes.io/max-replicas":     fmt.Sprint(replicas + 1),
				"deployment.kubernetes.io/revision":         "1",
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: &r, Selector: sel, Template: *tmpl},
	}
}

// podFor is a Pod of rs as the ReplicaSet controller makes it (the API
// server completes the generated name).
func podFor(rs *appsv1.ReplicaSet) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    rs.Name + "-",
			Namespace:       rs.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
		},
		Spec: t.Spec,
	}
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
