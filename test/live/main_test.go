package live

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/plugin/local"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/test/cluster"
)

var c *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// -short (make unit): no API server; every test skips.
		os.Exit(testbin.Run(m))
	}
	c = cluster.MustStart()
	// testbin.Run removes the plugin binaries the tests built.
	os.Exit(c.Finish(testbin.Run(m)))
}

// result is one in-process run of kubectl-inject.
type result struct {
	stdout, stderr string
	code           int
	// requests counts the requests sent, by method.
	requests map[string]int
	// sent lists the requests in order ("GET /api/v1/pods?...").
	sent []string
}

// runOpts tunes a run.
type runOpts struct {
	kubeconfig string
	stdin      string
	// beforeWrite, when set, is called once before the first PATCH, POST or
	// DELETE reaches the server.
	beforeWrite func()
	// wrap, when set, wraps the transport inside the request counter.
	wrap func(http.RoundTripper) http.RoundTripper
}

// inject runs kubectl-inject in-process as admin.
func inject(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, runOpts{}, args...)
}

func run(t *testing.T, ro runOpts, args ...string) result {
	t.Helper()
	if ro.kubeconfig == "" {
		ro.kubeconfig = c.AdminKubeconfig
	}
	streams, in, out, errOut := genericiooptions.NewTestIOStreams()
	in.WriteString(ro.stdin)
	o := cmd.NewOptions(streams, local.FrontEnd{})
	cacheDir := t.TempDir()
	o.ConfigFlags.CacheDir = &cacheDir
	counter := &requestCounter{counts: map[string]int{}, before: ro.beforeWrite}
	o.ConfigFlags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		if ro.wrap != nil {
			cfg.Wrap(ro.wrap)
		}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
		return cfg
	}
	command := cmd.NewCommand(o)
	command.SetArgs(append([]string{"--kubeconfig", ro.kubeconfig}, args...))
	code := cmd.Execute(command, streams)
	r := result{stdout: out.String(), stderr: errOut.String(), code: code, requests: counter.snapshot(), sent: counter.sentPaths()}
	t.Logf("kubectl inject %s\n--- exit %d, requests %v\n--- stderr:\n%s", strings.Join(args, " "), code, r.requests, r.stderr)
	return r
}

// requestCounter counts requests by method and can run a hook before the
// first write.
type requestCounter struct {
	next   http.RoundTripper
	mu     sync.Mutex
	counts map[string]int
	// paths lists every request as "METHOD path?query", in order, for a
	// failing count to show what was sent.
	paths  []string
	before func()
	fired  atomic.Bool
}

func (rc *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	rc.mu.Lock()
	rc.counts[req.Method]++
	rc.paths = append(rc.paths, req.Method+" "+req.URL.RequestURI())
	rc.mu.Unlock()
	if req.Method != http.MethodGet && rc.before != nil && rc.fired.CompareAndSwap(false, true) {
		rc.before()
	}
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

func (rc *requestCounter) sentPaths() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.paths...)
}

func (r result) writes() int {
	return r.requests[http.MethodPatch] + r.requests[http.MethodPost] + r.requests[http.MethodDelete] + r.requests[http.MethodPut]
}

// Resources used by the tests.
var (
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	statefulsets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	daemonsets   = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	replicasets  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	cronjobs     = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	jobs         = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	pods         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configmaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	sas          = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	crds         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func client(t *testing.T) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(c.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

var nsSeq atomic.Int32

// namespace creates a fresh namespace with a default ServiceAccount (no
// controller creates one here) and the ConfigMap envoy that the embedded
// default's sidecar mounts (live injection refuses a sidecar whose
// references are missing), and returns its name.
func namespace(t *testing.T) string {
	t.Helper()
	name := bareNamespace(t)
	create(t, name, configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: envoy\ndata:\n  envoy.json: '{}'\n")
	return name
}

// bareNamespace creates a fresh namespace with only a default
// ServiceAccount and returns its name.
func bareNamespace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if len(base) > 50 {
		base = strings.Trim(base[len(base)-50:], "-")
	}
	name := fmt.Sprintf("%s-%d", base, nsSeq.Add(1))
	create(t, "", namespaces, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", name))
	create(t, name, sas, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: default\n")
	return name
}

// create creates an object from YAML and returns it.
func create(t *testing.T, ns string, gvr schema.GroupVersionResource, manifest string) *unstructured.Unstructured {
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

func get(t *testing.T, ns string, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	t.Helper()
	out, err := client(t).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return out
}

// containerNames lists the container (and init container) names at the pod
// spec found at path.
func containerNames(t *testing.T, obj *unstructured.Unstructured, path ...string) []string {
	t.Helper()
	var names []string
	for _, field := range []string{"initContainers", "containers"} {
		list, _, err := unstructured.NestedSlice(obj.Object, append(append([]string{}, path...), field)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list {
			names = append(names, item.(map[string]any)["name"].(string))
		}
	}
	return names
}

func hasContainer(t *testing.T, obj *unstructured.Unstructured, name string, path ...string) bool {
	t.Helper()
	for _, n := range containerNames(t, obj, path...) {
		if n == name {
			return true
		}
	}
	return false
}

// field returns the JSON of the field at path, for comparisons.
func field(t *testing.T, obj *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func expectCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

func expectStderr(t *testing.T, r result, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

func deployment(name, labels string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels: {app: %[1]s%[2]s}
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports:
        - containerPort: 8080
`, name, labels)
}
