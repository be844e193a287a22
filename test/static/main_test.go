package static

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/plugin/local"
	"github.com/kinject/kubectl-inject/test/cluster"
)

var (
	c *cluster.Cluster
	// staticDir holds the static manifests the API server loads.
	staticDir string
)

var (
	pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// The namespaces: the static policy (default profile) injects those
// labelled enabled; the policy installed through the API for comparison,
// kinject-api (default profile too, so that its Pods are the same), only
// apiNS, which it names and which carries no label.
const (
	staticNS = "static-a"
	apiNS    = "api-a"
	plainNS  = "plain"
	apiName  = "api"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(testbin.Run(m))
	}
	var err error
	if staticDir, err = os.MkdirTemp("", "kinject-static-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The files first: an API server started with a staticManifestsDir
	// that does not exist, or holds a bad manifest, does not start.
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	command := cmd.NewCmdInject(streams, local.FrontEnd{})
	command.SetArgs([]string{"policy", "--static", staticDir})
	if code := cmd.Execute(command, streams); code != 0 {
		fmt.Fprintf(os.Stderr, "policy --static: exit %d: %s\n", code, errOut)
		os.Exit(1)
	}
	config := filepath.Join(staticDir, "admission.yaml")
	if err := os.WriteFile(config, out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// As test/admission: no ServiceAccount plugin (its token volume's
	// random name would differ between two Pods compared field for field).
	c = cluster.MustStart("--disable-admission-plugins=ServiceAccount", "--admission-control-config-file="+config)
	code := c.Finish(testbin.Run(m))
	os.RemoveAll(staticDir)
	os.Exit(code)
}

func client(t testing.TB) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(c.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// kubectlInject runs kubectl-inject in-process as admin (with no
// cluster, -short, for what needs none).
func kubectlInject(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	command := cmd.NewCmdInject(streams, local.FrontEnd{})
	if c != nil {
		args = append(args, "--kubeconfig", c.AdminKubeconfig)
	}
	command.SetArgs(args)
	code := cmd.Execute(command, streams)
	return out.String(), errOut.String(), code
}

// namespace creates ns, labelled enabled for the default profile when
// enabled is set.
func namespace(t testing.TB, ns string, enabled bool) {
	t.Helper()
	meta := map[string]any{"name": ns}
	if enabled {
		meta["labels"] = map[string]any{naming.NamespaceLabelFor(""): naming.NamespaceEnabled}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta}}
	_, err := client(t).Resource(namespaces).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// setup makes the namespaces and installs the comparison policy through
// the API, once.
func setup(t testing.TB) {
	t.Helper()
	c.Require(t)
	namespace(t, staticNS, true)
	namespace(t, apiNS, false)
	namespace(t, plainNS, false)
	if _, stderr, code := kubectlInject(t, "policy", "--apply", "--name", apiName, "--namespaces", apiNS); code != 0 {
		t.Fatalf("policy --apply: exit %d: %s", code, stderr)
	}
	waitInjecting(t, apiNS, "")
	waitWarning(t, apiNS)
}

// waitWarning waits until the validating policy warns about a Pod created
// in ns whose app uses the sidecar's admin port: its informer syncs apart
// from the mutating policy's.
func waitWarning(t testing.TB, ns string) {
	t.Helper()
	cfg := c.AdminConfig()
	w := &warnings{}
	cfg.WarningHandler = w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	for i := 0; ; i++ {
		p := simplePod(fmt.Sprintf("conflict-probe-%d-%d", start.UnixNano(), i))
		_ = unstructured.SetNestedSlice(p.Object, []any{map[string]any{"name": "app", "image": "app:1", "ports": []any{map[string]any{"containerPort": int64(9901)}}}}, "spec", "containers")
		p.SetNamespace(ns)
		if got, err := dc.Resource(pods).Namespace(ns).Create(ctx, p, metav1.CreateOptions{}); err == nil {
			_ = dc.Resource(pods).Namespace(ns).Delete(ctx, got.GetName(), metav1.DeleteOptions{})
		}
		if len(w.take()) > 0 {
			return
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("%s: no conflict warning after %v", ns, time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitInjecting waits until a Pod created in ns gets the sidecar (with
// image, when not ""): a policy created through the API, or a changed
// static file, takes effect some time later. It returns how long that
// took.
func waitInjecting(t testing.TB, ns, image string) time.Duration {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	for i := 0; ; i++ {
		got, err := createPod(ctx, t, ns, simplePod(fmt.Sprintf("probe-%d-%d", start.UnixNano(), i)))
		if err == nil {
			_ = client(t).Resource(pods).Namespace(ns).Delete(ctx, got.GetName(), metav1.DeleteOptions{})
			if injected(got) == "injected" && (image == "" || sidecarImage(got) == image) {
				return time.Since(start)
			}
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("%s: no Pod injected (image %q) after %v: %v", ns, image, time.Since(start), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// injected says what the admission did to a stored Pod: "injected" (a
// status record), "skipped" (a skip reason recorded) or "" (left as
// created, with no mark).
func injected(p *unstructured.Unstructured) string {
	ann := p.GetAnnotations()
	switch {
	case ann[naming.StatusAnnotationFor("")] != "":
		return "injected"
	case ann[naming.SkippedAnnotationFor("")] != "":
		return "skipped"
	}
	return ""
}

func sidecarImage(p *unstructured.Unstructured) string {
	for _, field := range []string{"initContainers", "containers"} {
		list, _, _ := unstructured.NestedSlice(p.Object, "spec", field)
		for _, item := range list {
			m, _ := item.(map[string]any)
			if m["name"] == "envoy" {
				s, _ := m["image"].(string)
				return s
			}
		}
	}
	return ""
}

// simplePod is a Pod with one app container.
func simplePod(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1", "ports": []any{map[string]any{"containerPort": int64(8080)}}}}},
	}}
}

func createPod(ctx context.Context, t testing.TB, ns string, p *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	p = p.DeepCopy()
	p.SetNamespace(ns)
	return client(t).Resource(pods).Namespace(ns).Create(ctx, p, metav1.CreateOptions{})
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

var metaCreate = metav1.CreateOptions{}
