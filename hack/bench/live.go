package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// requests is a delta of the API server's apiserver_request_total.
type requests struct {
	Deployments map[string]int // verb -> count, resource="deployments"
	All         int            // every request (the scrapes of /metrics are not counted)
	Calls       map[call]int   // every series by verb, resource and subresource
}

// call is a kind of request as apiserver_request_total labels it.
type call struct{ Verb, Group, Resource, Subresource string }

// String is "LIST deployments.apps", "GET pods/log", or "GET /apis" for a
// request that is not for a resource (the path is in the subresource label).
func (c call) String() string {
	if c.Resource == "" {
		return c.Verb + " /" + strings.TrimPrefix(c.Subresource, "/")
	}
	r := c.Resource
	if c.Group != "" {
		r += "." + c.Group
	}
	if c.Subresource != "" {
		r += "/" + c.Subresource
	}
	return c.Verb + " " + r
}

func (r requests) verb(v string) int { return r.Deployments[v] }

func (r requests) String() string {
	var verbs []string
	for v := range r.Deployments {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	var parts []string
	for _, v := range verbs {
		parts = append(parts, fmt.Sprintf("%s %d", v, r.Deployments[v]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

type liveRow struct {
	N           int
	Plugin      time.Duration
	PluginReq   requests
	PluginLines map[string]int // action -> objects
	Second      time.Duration
	SecondReq   requests
	SecondLines map[string]int
	Loop        time.Duration // for LoopN objects
	LoopN       int
	LoopReq     requests
	Created     time.Duration
	// The same first run on other fresh Deployments with kubectl's
	// discovery limits (conservativeRateFlags), for comparison.
	Conservative      time.Duration
	ConservativeReq   requests
	ConservativeLines map[string]int
}

// The plugin's main live runs use its default client rate limits (no
// flags); a run with kubectl's discovery limits is measured beside them.
var conservativeRateFlags = []string{"--qps", "50", "--burst", "300"}

// LoopFull is the loop's time for N objects (extrapolated linearly when
// only a sample was patched).
func (r liveRow) LoopFull() time.Duration {
	return time.Duration(float64(r.Loop) * float64(r.N) / float64(r.LoopN))
}

func (e *env) live() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t0 := time.Now()
	c, err := cluster.Start(ctx)
	cancel()
	if err != nil {
		return fmt.Errorf("start the test cluster: %w", err)
	}
	defer c.Stop()
	logf("live: cluster up in %s at %s", time.Since(t0).Round(100*time.Millisecond), c.URL)
	cfg := c.AdminConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	tmpl, err := deploymentTemplate()
	if err != nil {
		return err
	}
	patch, err := jsonPatch()
	if err != nil {
		return err
	}
	kubectl, err := testbin.FindTool("kubectl")
	if err != nil {
		return err
	}
	e.report.kubectlVersion = kubectlVersion(kubectl)
	// Warm kubectl's discovery cache so the loop's first call is not special.
	if out, err := exec.Command(kubectl, "--kubeconfig", c.AdminKubeconfig, "get", "deployments", "-A").CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl get: %v\n%s", err, out)
	}
	script := filepath.Join(e.tmp, "patch-loop.sh")
	if err := os.WriteFile(script, []byte(`#!/bin/bash
# usage: patch-loop.sh KUBECONFIG NAMESPACE PATCH NAME...
set -e
kc=$1 ns=$2 p=$3
shift 3
for d in "$@"; do
  kubectl --kubeconfig "$kc" -n "$ns" patch deployment "$d" --type strategic -p "$p" >/dev/null
done
`), 0o755); err != nil {
		return err
	}
	ctx = context.Background()
	for _, n := range e.opts.liveNs {
		row := liveRow{N: n, LoopN: min(n, e.opts.loopSample)}
		ns, loopNs, defNs := fmt.Sprintf("bench-%d", n), fmt.Sprintf("loop-%d", n), fmt.Sprintf("default-%d", n)
		t := time.Now()
		for _, x := range []struct {
			ns string
			n  int
		}{{ns, n}, {loopNs, row.LoopN}, {defNs, n}} {
			if err := createDeployments(ctx, cs, tmpl, x.ns, x.n); err != nil {
				return err
			}
		}
		row.Created = time.Since(t)
		logf("live N=%d: created %d + %d + %d Deployments in %s", n, n, row.LoopN, n, row.Created.Round(100*time.Millisecond))

		pluginRun := func(ns string, flags ...string) (time.Duration, requests, map[string]int, error) {
			before, err := scrape(ctx, cs)
			if err != nil {
				return 0, requests{}, nil, err
			}
			cmd := exec.Command(e.plugin, append([]string{"deploy", "--all", "-n", ns, "--kubeconfig", c.AdminKubeconfig}, flags...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			err = cmd.Run()
			d := time.Since(start)
			if err != nil {
				return 0, requests{}, nil, fmt.Errorf("kubectl-inject deploy --all %s: %v\n%s", strings.Join(flags, " "), err, tailLines(stderr.String(), 20))
			}
			after, err := scrape(ctx, cs)
			if err != nil {
				return 0, requests{}, nil, err
			}
			return d, after.minus(before), actions(stderr.String()), nil
		}
		if row.Plugin, row.PluginReq, row.PluginLines, err = pluginRun(ns); err != nil {
			return err
		}
		logf("live N=%d: kubectl-inject: %s, requests %v, %v", n, secs(row.Plugin), row.PluginReq, row.PluginLines)
		if row.Second, row.SecondReq, row.SecondLines, err = pluginRun(ns); err != nil {
			return err
		}
		logf("live N=%d: second run %s, requests %v, %v", n, secs(row.Second), row.SecondReq, row.SecondLines)
		if row.Conservative, row.ConservativeReq, row.ConservativeLines, err = pluginRun(defNs, conservativeRateFlags...); err != nil {
			return err
		}
		logf("live N=%d: kubectl-inject %s: %s, requests %v, %v", n, strings.Join(conservativeRateFlags, " "), secs(row.Conservative), row.ConservativeReq, row.ConservativeLines)
		for _, x := range []string{ns, defNs} {
			if got, err := countInjected(ctx, cs, x); err != nil {
				return err
			} else if got != n {
				return fmt.Errorf("live N=%d: %d Deployments in %s have the envoy container, want %d", n, got, x, n)
			}
		}

		args := []string{script, c.AdminKubeconfig, loopNs, patch}
		for i := 0; i < row.LoopN; i++ {
			args = append(args, fmt.Sprintf("app-%d", i))
		}
		before, err := scrape(ctx, cs)
		if err != nil {
			return err
		}
		cmd := exec.Command("bash", args...)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kubectl patch loop: %v\n%s", err, tailLines(stderr.String(), 20))
		}
		row.Loop = time.Since(start)
		after, err := scrape(ctx, cs)
		if err != nil {
			return err
		}
		row.LoopReq = after.minus(before)
		if got, err := countInjected(ctx, cs, loopNs); err != nil {
			return err
		} else if got != row.LoopN {
			return fmt.Errorf("kubectl patch loop: %d Deployments have the envoy container, want %d", got, row.LoopN)
		}
		logf("live N=%d: kubectl patch loop over %d: %s (N: %s), requests %v", n, row.LoopN, secs(row.Loop), secs(row.LoopFull()), row.LoopReq)
		e.report.live = append(e.report.live, row)
	}
	return nil
}

func kubectlVersion(kubectl string) string {
	out, err := exec.Command(kubectl, "version", "--client").Output()
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Client Version:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "Client Version:"))
		}
	}
	return strings.TrimSpace(string(out))
}

// deploymentTemplate is the first Deployment of the generator's output.
func deploymentTemplate() (*appsv1.Deployment, error) {
	var buf bytes.Buffer
	if err := gen.Write(&buf, 1); err != nil {
		return nil, err
	}
	var d appsv1.Deployment
	if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(splitDocs(buf.Bytes())[0]), 4096).Decode(&d); err != nil {
		return nil, fmt.Errorf("decode the generated Deployment: %w", err)
	}
	if d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("the generator's first document is not a Deployment with containers")
	}
	return &d, nil
}

// createDeployments creates namespace ns with n Deployments app-0..app-(n-1),
// 32 at a time.
func createDeployments(ctx context.Context, cs kubernetes.Interface, tmpl *appsv1.Deployment, ns string, n int) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				d := tmpl.DeepCopy()
				name := fmt.Sprintf("app-%d", i)
				d.Name, d.Namespace = name, ns
				d.Labels["app"] = name
				d.Spec.Selector.MatchLabels["app"] = name
				d.Spec.Template.Labels["app"] = name
				if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create %s/%s: %w", ns, name, err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

func countInjected(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	list, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range list.Items {
		for _, c := range append(d.Spec.Template.Spec.Containers, d.Spec.Template.Spec.InitContainers...) {
			if c.Name == "envoy" {
				n++
				break
			}
		}
	}
	return n, nil
}

// counters is one scrape of apiserver_request_total.
type counters struct {
	deployments map[string]int
	calls       map[call]int
	all         int
}

// minus is the requests between two scrapes. The API server does not count
// requests for /metrics in apiserver_request_total, so the scrapes add
// nothing.
func (a counters) minus(b counters) requests {
	r := requests{Deployments: map[string]int{}, All: a.all - b.all, Calls: map[call]int{}}
	for v, c := range a.deployments {
		if d := c - b.deployments[v]; d != 0 {
			r.Deployments[v] = d
		}
	}
	for k, c := range a.calls {
		if d := c - b.calls[k]; d != 0 {
			r.Calls[k] = d
		}
	}
	return r
}

func scrape(ctx context.Context, cs kubernetes.Interface) (counters, error) {
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return counters{}, fmt.Errorf("read /metrics: %w", err)
	}
	c := counters{deployments: map[string]int{}, calls: map[call]int{}}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		c.all += int(v)
		c.calls[call{Verb: label(line, "verb"), Group: label(line, "group"), Resource: label(line, "resource"), Subresource: label(line, "subresource")}] += int(v)
		if strings.Contains(line, `resource="deployments"`) && strings.Contains(line, `subresource=""`) {
			c.deployments[label(line, "verb")] += int(v)
		}
	}
	return c, sc.Err()
}

// label is the value of label name in a series line (name must follow "{"
// or ",": resource is not the end of subresource).
func label(line, name string) string {
	for _, sep := range []string{"{", ","} {
		i := strings.Index(line, sep+name+`="`)
		if i < 0 {
			continue
		}
		rest := line[i+len(sep)+len(name)+2:]
		return rest[:strings.IndexByte(rest, '"')]
	}
	return ""
}

// actions counts the plugin's result lines by action
// ("deployment.apps/app-0 injected" -> injected).
func actions(stderr string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(stderr, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.Contains(f[0], "/") {
			m[strings.TrimSuffix(f[1], ":")]++
		}
	}
	return m
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
