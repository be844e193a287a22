package rollout

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/kinject/kubectl-inject/plugin/local"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/test/cluster"
)

var c *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(testbin.Run(m))
	}
	c = cluster.MustStartWith(cluster.Options{ControlPlane: true})
	os.Exit(c.Finish(testbin.Run(m)))
}

var (
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	statefulsets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	daemonsets   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	replicasets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	jobs         = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronjobs     = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	pods         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	sas          = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

// The sidecar templates of the tests: v1, then the upgrade v2, native
// sidecars as the default is (a classic one is refused for the Jobs'
// Pods). Neither references an object, so no namespace needs anything for
// them.
const (
	sidecarV1 = "initContainers:\n- name: proxy\n  image: envoyproxy/envoy:v1.33.0\n  restartPolicy: Always\n"
	sidecarV2 = "initContainers:\n- name: proxy\n  image: envoyproxy/envoy:v1.34.0\n  restartPolicy: Always\n"
)

func client(t testing.TB) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(c.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// result is one in-process run of kubectl-inject.
type result struct {
	stdout, stderr string
	code           int
	requests       map[string]int
}

// kinject runs kubectl-inject in-process as admin, counting its requests.
func kinject(t testing.TB, args ...string) result {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := cmd.NewOptions(streams, local.FrontEnd{})
	cacheDir := t.TempDir()
	o.ConfigFlags.CacheDir = &cacheDir
	counter := &requestCounter{counts: map[string]int{}}
	o.ConfigFlags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
		return cfg
	}
	command := cmd.NewCommand(o)
	command.SetArgs(append([]string{"--kubeconfig", c.AdminKubeconfig}, args...))
	code := cmd.Execute(command, streams)
	r := result{stdout: out.String(), stderr: errOut.String(), code: code, requests: counter.snapshot()}
	t.Logf("kubectl inject %s\n--- exit %d, requests %v\n--- stderr:\n%s", strings.Join(args, " "), code, r.requests, r.stderr)
	return r
}

type requestCounter struct {
	next   http.RoundTripper
	mu     sync.Mutex
	counts map[string]int
}

func (rc *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	rc.mu.Lock()
	method := req.Method
	if req.URL.Query().Get("watch") == "true" {
		method = "WATCH"
	}
	rc.counts[method]++
	rc.mu.Unlock()
	return rc.next.RoundTrip(req)
}

func (rc *requestCounter) snapshot() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for k, v := range rc.counts {
		out[k] = v
	}
	return out
}

func expectCode(t testing.TB, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

var nsSeq atomic.Int32

// testLabel marks the namespaces the tests make.
const testLabel = "kinject.dev/test"

// onlyNamespaces waits until the test namespaces of earlier tests are
// gone, but keep.
func onlyNamespaces(t testing.TB, keep ...string) {
	t.Helper()
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	eventually(t, 2*time.Minute, "the namespaces of earlier tests to go", func() bool {
		l, err := client(t).Resource(namespaces).List(context.Background(), metav1.ListOptions{LabelSelector: testLabel})
		if err != nil {
			return false
		}
		for _, n := range l.Items {
			if !kept[n.GetName()] {
				return false
			}
		}
		return true
	})
}

// namespace creates a namespace named after the test and waits for its
// default ServiceAccount (the controller manager creates it; Pods need it).
func namespace(t testing.TB, suffix string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimPrefix(t.Name(), "Test")) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	base := b.String()
	if len(base) > 30 {
		base = base[:30]
	}
	name := fmt.Sprintf("%s-%s-%d", base, suffix, nsSeq.Add(1))
	create(t, "", namespaces, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n  labels: {%s: %q}\n", name, testLabel, "true"))
	// The namespace controller deletes what is inside: a later test that
	// restarts with -A sees only its own namespaces.
	t.Cleanup(func() {
		_ = client(t).Resource(namespaces).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	eventually(t, time.Minute, "the default ServiceAccount of "+name, func() bool {
		_, err := client(t).Resource(sas).Namespace(name).Get(context.Background(), "default", metav1.GetOptions{})
		return err == nil
	})
	return name
}

// create creates the objects of a YAML stream in ns.
func create(t testing.TB, ns string, gvr schema.GroupVersionResource, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("decode manifest: %v\n%s", err, manifest)
	}
	out, err := client(t).Resource(gvr).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, ns, obj.GetName(), err)
	}
	return out
}

func get(t testing.TB, ns string, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	t.Helper()
	out, err := client(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return out
}

func list(t testing.TB, ns string, gvr schema.GroupVersionResource) []unstructured.Unstructured {
	t.Helper()
	l, err := client(t).Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list %s in %s: %v", gvr.Resource, ns, err)
	}
	return l.Items
}

// eventually polls cond every 200 ms until it holds, or fails after d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// settled waits until every Deployment, StatefulSet and DaemonSet of ns
// has completed its rollout (rollout.Status).
func settled(t testing.TB, ns string) {
	t.Helper()
	eventually(t, 2*time.Minute, "the rollouts in "+ns+" to complete", func() bool {
		for _, gvr := range []schema.GroupVersionResource{deployments, statefulsets, daemonsets} {
			for _, o := range list(t, ns, gvr) {
				o.SetKind(kindOf(gvr))
				if !rollout.Status(&o).Done {
					return false
				}
			}
		}
		return true
	})
}

func kindOf(gvr schema.GroupVersionResource) string {
	switch gvr.Resource {
	case "deployments":
		return "Deployment"
	case "statefulsets":
		return "StatefulSet"
	case "daemonsets":
		return "DaemonSet"
	case "replicasets":
		return "ReplicaSet"
	}
	return ""
}

// writeFile writes content to a new file in t's temporary directory.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// statusRows runs kubectl inject status -o json.
func statusRows(t testing.TB, args ...string) []fleet.Row {
	t.Helper()
	r := kinject(t, append([]string{"status", "-o", "json"}, args...)...)
	expectCode(t, r, 0)
	var l struct {
		Items []fleet.Row `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.stdout)
	}
	return l.Items
}

// behind sums PodsBehind over rows, leaving out those keep says to.
func behind(rows []fleet.Row, skip func(fleet.Row) bool) (n int, which []string) {
	for _, r := range rows {
		if skip != nil && skip(r) {
			continue
		}
		if r.PodsBehind > 0 || r.State == fleet.Outdated {
			n += r.PodsBehind
			which = append(which, fmt.Sprintf("%s/%s %s behind=%d", r.Namespace, r.Ref(), r.State, r.PodsBehind))
		}
	}
	return n, which
}

// kubectl runs the kubectl built at the API server's version.
func kubectl(t testing.TB, args ...string) (string, error) {
	t.Helper()
	bin := testbin.NeedTool(t, "kubectl.v1.37.2")
	cmd := exec.Command(bin, append([]string{"--kubeconfig", c.AdminKubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// enableAdmission installs the policy of template and turns admission on
// in each namespace, and waits until the API server injects there.
func enableAdmission(t testing.TB, template string, nss ...string) {
	t.Helper()
	expectCode(t, kinject(t, "policy", "--apply", "--template", template), 0)
	t.Cleanup(func() { kinject(t, "policy", "--delete", "--template", template) })
	for _, ns := range nss {
		expectCode(t, kinject(t, "enable", ns), 0)
	}
	waitPolicy(t, template, nss...)
}

// waitPolicy waits until a Pod created (dry run) in each namespace comes
// back with the sidecar of template.
func waitPolicy(t testing.TB, template string, nss ...string) {
	t.Helper()
	data, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	image := ""
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "image: "); ok {
			image = v
		}
	}
	waitPolicyImage(t, image, nss...)
}

// waitPolicyImage waits until a Pod created (dry run) in each namespace
// comes back with a container of image.
func waitPolicyImage(t testing.TB, image string, nss ...string) {
	t.Helper()
	for _, ns := range nss {
		probe := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "probe"},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx"}}},
		}}
		eventually(t, time.Minute, "the policy injecting "+image+" in "+ns, func() bool {
			got, err := client(t).Resource(pods).Namespace(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil && strings.Contains(fmt.Sprint(got.Object["spec"]), image)
		})
	}
}

// containers lists the container images of a Pod (init containers too).
func images(p unstructured.Unstructured) []string {
	var out []string
	for _, f := range []string{"initContainers", "containers"} {
		l, _, _ := unstructured.NestedSlice(p.Object, "spec", f)
		for _, item := range l {
			m, _ := item.(map[string]any)
			out = append(out, fmt.Sprint(m["image"]))
		}
	}
	return out
}

func hasImage(p unstructured.Unstructured, image string) bool {
	for _, i := range images(p) {
		if i == image {
			return true
		}
	}
	return false
}
