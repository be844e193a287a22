package live

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// TestAPIServerStops stops the real kube-apiserver process partway through
// a run, on a cluster of its own. Every object gets a line, the exit code
// is 1, and once the server is back each object is either fully injected or
// untouched; a second run finishes the rest.
func TestAPIServerStops(t *testing.T) {
	c.Require(t)
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	own, dyn := ownCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ns, n = "outage", 10
	createIn(t, dyn, "", namespaces, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n")
	createIn(t, dyn, ns, configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: envoy\n")
	for i := range n {
		createIn(t, dyn, ns, deployments, deployment(fmt.Sprintf("w%02d", i), ""))
	}

	var patches atomic.Int32
	r := run(t, runOpts{kubeconfig: own.AdminKubeconfig, wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && patches.Add(1) == 5 {
				own.StopAPIServer() // for real: the process exits before this request is sent
			}
			return rt.RoundTrip(req)
		})
	}}, "deployments", "--all", "-n", ns, "--concurrency", "1")
	expectCode(t, r, 1)
	if got := strings.Count(r.stderr, "deployment.apps/"); got != n {
		t.Errorf("%d object lines for %d objects:\n%s", got, n, r.stderr)
	}
	expectStderr(t, r, "connection refused", "6 of 10 objects failed")

	if err := own.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	injected := 0
	for i := range n {
		obj, err := dyn.Resource(deployments).Namespace(ns).Get(ctx, fmt.Sprintf("w%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names := containerNames(t, obj, "spec", "template", "spec")
		status, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "annotations", "sidecar.kinject.dev/status")
		switch {
		case len(names) == 2 && status != "":
			injected++
		case len(names) == 1 && status == "":
		default:
			t.Errorf("%s half-injected: containers %v, status %q", obj.GetName(), names, status)
		}
	}
	if injected != 4 {
		t.Errorf("%d injected, want the 4 patched before the server stopped", injected)
	}
	r = run(t, runOpts{kubeconfig: own.AdminKubeconfig}, "deployments", "--all", "-n", ns)
	expectCode(t, r, 0)
	if strings.Count(r.stderr, " injected\n") != 6 || strings.Count(r.stderr, " unchanged\n") != 4 {
		t.Errorf("second run:\n%s", r.stderr)
	}
}

// createIn creates an object from YAML on another cluster than the shared one.
// ownCluster starts an API server for one test, stopped at its end, and
// returns it with an admin client.
func ownCluster(t *testing.T) (*cluster.Cluster, dynamic.Interface) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	own, err := cluster.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Stop)
	dyn, err := dynamic.NewForConfig(own.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	return own, dyn
}

func createIn(t *testing.T, dyn dynamic.Interface, ns string, gvr schema.GroupVersionResource, manifest string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}
