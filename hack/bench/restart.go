package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// Part 9: kubectl inject restart against a loop of kubectl rollout
// restart + kubectl rollout status, on a cluster that runs its control
// plane (test/cluster with kwok Nodes), for Deployments of one Pod
// injected at admission whose template was upgraded.

// restartResult is part 9's measurements.
type restartResult struct {
	Deployments, LoopSample, MaxInFlight int
	KubectlVersion                       string
	// Wall times: restart for all Deployments, the loop for its sample.
	Restart, Loop time.Duration
	// Requests by method ("WATCH" for watches), as the counting proxy saw them.
	RestartRequests, LoopRequests map[string]int
	RestartMaxInFlight            int
}

// restart runs part 9.
func (e *env) restart() error {
	ctx := context.Background()
	startCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	t0 := time.Now()
	c, err := cluster.StartWith(startCtx, cluster.Options{ControlPlane: true})
	cancel()
	if err != nil {
		return fmt.Errorf("start the test cluster with its control plane: %w", err)
	}
	defer c.Stop()
	logf("restart: cluster with control plane up in %s", time.Since(t0).Round(100*time.Millisecond))
	kubectl, err := testbin.FindTool("kubectl.v1.37.2")
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.AdminConfig())
	if err != nil {
		return err
	}
	v1, v2 := filepath.Join(e.tmp, "restart-v1.yaml"), filepath.Join(e.tmp, "restart-v2.yaml")
	if err := os.WriteFile(v1, []byte("containers:\n- name: proxy\n  image: envoyproxy/envoy:v1.33.0\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(v2, []byte("containers:\n- name: proxy\n  image: envoyproxy/envoy:v1.34.0\n"), 0o644); err != nil {
		return err
	}
	o := e.opts
	fleet, loop := "bench-restart", "bench-loop"
	if err := e.plugins(c.AdminKubeconfig, "policy", "--apply", "--template", v1); err != nil {
		return err
	}
	for ns, n := range map[string]int{fleet: o.restartDeployments, loop: o.restartLoopSample} {
		if err := benchNamespace(ctx, dyn, ns); err != nil {
			return err
		}
		if err := e.plugins(c.AdminKubeconfig, "enable", ns); err != nil {
			return err
		}
		if err := waitInjecting(ctx, dyn, ns, "v1.33.0"); err != nil {
			return err
		}
		for i := range n {
			if err := createReplicas(ctx, dyn, ns, fmt.Sprintf("app-%03d", i), 1); err != nil {
				return err
			}
		}
	}
	t1 := time.Now()
	for _, ns := range []string{fleet, loop} {
		if err := waitRolledOut(ctx, dyn, ns, 10*time.Minute); err != nil {
			return err
		}
	}
	logf("restart: %d + %d Deployments running in %s", o.restartDeployments, o.restartLoopSample, time.Since(t1).Round(100*time.Millisecond))
	if err := e.plugins(c.AdminKubeconfig, "policy", "--apply", "--template", v2); err != nil {
		return err
	}
	for _, ns := range []string{fleet, loop} {
		if err := waitInjecting(ctx, dyn, ns, "v1.34.0"); err != nil {
			return err
		}
	}

	proxy, kc, err := e.countingKubeconfig(c, "restart")
	if err != nil {
		return err
	}
	defer proxy.close()
	res := &restartResult{Deployments: o.restartDeployments, LoopSample: o.restartLoopSample, MaxInFlight: o.restartMaxInFlight, KubectlVersion: kubectlVersion(kubectl)}

	// The loop, as a script would do it: one Deployment after the other.
	proxy.reset()
	t2 := time.Now()
	for i := range o.restartLoopSample {
		name := fmt.Sprintf("deploy/app-%03d", i)
		for _, args := range [][]string{{"rollout", "restart", name}, {"rollout", "status", name, "--timeout=5m"}} {
			cmd := exec.Command(kubectl, append(args, "-n", loop, "--kubeconfig", kc)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	}
	res.Loop, res.LoopRequests = time.Since(t2), proxy.counts()
	logf("restart: kubectl loop on %d Deployments in %s, %v", o.restartLoopSample, res.Loop.Round(time.Millisecond), res.LoopRequests)

	proxy.reset()
	t3 := time.Now()
	cmd := exec.Command(e.plugin, "restart", "-n", fleet, "--template", v2, "--max-in-flight", fmt.Sprint(o.restartMaxInFlight), "-o", "json", "--kubeconfig", kc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl-inject restart: %v\n%s", err, tailLines(stderr.String(), 20))
	}
	res.Restart, res.RestartRequests = time.Since(t3), proxy.counts()
	var rep struct {
		Done        int `json:"done"`
		MaxInFlight int `json:"maxInFlight"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return fmt.Errorf("restart -o json: %w", err)
	}
	if rep.Done != o.restartDeployments {
		return fmt.Errorf("restart brought %d of %d Deployments to current", rep.Done, o.restartDeployments)
	}
	res.RestartMaxInFlight = rep.MaxInFlight
	logf("restart: kubectl inject restart on %d Deployments in %s, %v", o.restartDeployments, res.Restart.Round(time.Millisecond), res.RestartRequests)
	e.report.restart = res
	return nil
}

// plugins runs bin/kubectl-inject ARGS against kubeconfig.
func (e *env) plugins(kubeconfig string, args ...string) error {
	cmd := exec.Command(e.plugin, append(args, "--kubeconfig", kubeconfig)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl-inject %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

var (
	benchDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	benchNamespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// benchNamespace creates ns and waits for its default ServiceAccount.
func benchNamespace(ctx context.Context, dyn dynamic.Interface, ns string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := dyn.Resource(benchNamespaces).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return err
	}
	sa := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := dyn.Resource(sa).Namespace(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no default ServiceAccount in %s: %w", ns, err)
		}
	}
}

// waitInjecting waits until a Pod created in ns (a server-side dry run)
// gets the sidecar image of tag: the API server runs the policy there.
func waitInjecting(ctx context.Context, dyn dynamic.Interface, ns, tag string) error {
	probe := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "probe"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx"}}},
	}}
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		got, err := dyn.Resource(pods).Namespace(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && strings.Contains(fmt.Sprint(got.Object["spec"]), tag) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the policy does not inject %s in %s (last error: %v)", tag, ns, err)
		}
	}
}

// countingKubeconfig starts a counting proxy in front of c's API server
// and writes a kubeconfig that reaches it, named for the part.
func (e *env) countingKubeconfig(c *cluster.Cluster, part string) (*countingProxy, string, error) {
	proxy, err := newCountingProxy(c)
	if err != nil {
		return nil, "", err
	}
	kc := filepath.Join(e.tmp, part+".kubeconfig")
	if err := os.WriteFile(kc, []byte(proxy.kubeconfig()), 0o600); err != nil {
		proxy.close()
		return nil, "", err
	}
	return proxy, kc, nil
}

// deploymentsPending counts the Deployments of ns whose rollout is not
// complete, as kubectl rollout status judges it, of total.
func deploymentsPending(ctx context.Context, dyn dynamic.Interface, ns string) (pending, total int, err error) {
	l, err := dyn.Resource(benchDeployments).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for i := range l.Items {
		l.Items[i].SetKind("Deployment")
		if !rollout.Status(&l.Items[i]).Done {
			pending++
		}
	}
	return pending, len(l.Items), nil
}

// waitRolledOut waits until every Deployment of ns has rolled out.
func waitRolledOut(ctx context.Context, dyn dynamic.Interface, ns string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pending, deployments, err := deploymentsPending(ctx, dyn, ns)
		if err != nil {
			return err
		}
		if pending == 0 {
			// and every Pod exists and is Ready (a Deployment's status
			// can be complete before its first Pod is counted)
			pods, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			ready := 0
			for i := range pods.Items {
				if rollout.PodReady(&pods.Items[i]) {
					ready++
				}
			}
			// one Pod a Deployment
			if ready == deployments && len(pods.Items) == deployments {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d Deployments of %s still rolling after %s", pending, ns, timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// countingProxy forwards plain HTTP on loopback to the API server, as
// admin, and counts the requests by method (WATCH for watches), so that
// both clients are counted the same way, with none of the controllers'.
type countingProxy struct {
	srv   *http.Server
	addr  string
	token string
	mu    sync.Mutex
	n     map[string]int
}

func newCountingProxy(c *cluster.Cluster) (*countingProxy, error) {
	target, err := url.Parse(c.URL)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{addr: l.Addr().String(), token: c.AdminConfig().BearerToken, n: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the test server's self-signed certificate
	rp.FlushInterval = -1                                                                  // watches stream
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			method = "WATCH"
		}
		p.mu.Lock()
		p.n[method]++
		p.mu.Unlock()
		// the clients speak plain HTTP to the proxy, over which they send
		// no credentials: the proxy authenticates as admin.
		r.Header.Set("Authorization", "Bearer "+p.token)
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

func (p *countingProxy) kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster: {server: "http://%s"}
users:
- name: admin
  user: {}
contexts:
- name: admin
  context: {cluster: bench, user: admin}
current-context: admin
`, p.addr)
}

func (p *countingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = map[string]int{}
}

func (p *countingProxy) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.n {
		out[k] = v
	}
	return out
}

func (p *countingProxy) close() { _ = p.srv.Close() }
