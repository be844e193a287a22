package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/plugin/local"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/test/cluster"
)

var c *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(testbin.Run(m))
	}
	// The ServiceAccount admission plugin gives every Pod a token volume
	// with a random name (kube-api-access-xxxxx), which no field-for-field
	// comparison of two Pods survives; and it needs a controller to create
	// the default ServiceAccounts. Every other default plugin runs.
	c = cluster.MustStart("--disable-admission-plugins=ServiceAccount")
	// testbin.Run removes the plugin binaries the tests built.
	os.Exit(c.Finish(testbin.Run(m)))
}

var (
	pods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

func client(t testing.TB) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(c.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// kubectlInject runs kubectl-inject in-process as admin and returns stdout,
// stderr and the exit code.
func kubectlInject(t testing.TB, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	command := cmd.NewCmdInject(streams, local.FrontEnd{})
	command.SetArgs(append(args, "--kubeconfig", c.AdminKubeconfig))
	code := cmd.Execute(command, streams)
	return out.String(), errOut.String(), code
}

// ensureNamespace creates ns if it does not exist, and gives it what the
// policies of the tests need there, as a user would before turning
// admission on: the injection label of each profile (kubectl inject
// enable NS --profile P) and the objects each template references. What
// a later applyPolicy needs is added to every namespace already made.
func ensureNamespace(t testing.TB, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := client(t).Resource(namespaces).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	prepared.Lock()
	defer prepared.Unlock()
	prepared.namespaces[ns] = true
	for _, n := range prepared.needs {
		n.giveTo(t, ns)
	}
}

// need is what one policy needs in a namespace: its profile's label and
// the objects its template references.
type need struct {
	label string
	refs  []template.Reference
}

// prepared records the test namespaces and what they were given.
var prepared = struct {
	sync.Mutex
	namespaces map[string]bool
	needs      []need
}{
	namespaces: map[string]bool{},
	// The embedded default: the default profile's label, the ConfigMap envoy.
	needs: []need{{label: naming.NamespaceLabelFor(""), refs: inject.DefaultTemplate().References()}},
}

// prepareFor makes every test namespace (now and later) ready for the
// policy of configFile.
func prepareFor(t testing.TB, configFile string) {
	t.Helper()
	cfg := configOf(t, configFile)
	tmpl := cfg.Template
	if tmpl == nil {
		tmpl = inject.DefaultTemplate()
	}
	n := need{label: naming.NamespaceLabelFor(cfg.Settings.Profile), refs: tmpl.References()}
	prepared.Lock()
	defer prepared.Unlock()
	prepared.needs = append(prepared.needs, n)
	for ns := range prepared.namespaces {
		n.giveTo(t, ns)
	}
}

func (n need) giveTo(t testing.TB, ns string) {
	t.Helper()
	ctx := context.Background()
	patch := []byte(`{"metadata":{"labels":{"` + n.label + `":"` + naming.NamespaceEnabled + `"}}}`)
	if _, err := client(t).Resource(namespaces).Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("enable %s: %v", ns, err)
	}
	for _, r := range n.refs {
		obj := referenced(r)
		_, err := client(t).Resource(referenceResource(r.Kind)).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s in %s: %v", r, ns, err)
		}
	}
}

// referenced is an object of r's kind and name that satisfies the reference.
func referenced(r template.Reference) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": "v1", "kind": r.Kind, "metadata": map[string]any{"name": r.Name}}
	if r.Kind == template.KindPVC {
		obj["spec"] = map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Mi"}}}
	}
	return &unstructured.Unstructured{Object: obj}
}

func referenceResource(kind string) schema.GroupVersionResource {
	switch kind {
	case template.KindSecret:
		return schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	case template.KindPVC:
		return schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	}
	return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
}

// podFrom parses a Pod manifest (YAML or JSON).
func podFrom(t testing.TB, manifest []byte) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(manifest, &obj); err != nil {
		t.Fatalf("parsing pod manifest: %v\n%s", err, manifest)
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	return u
}

// createPod creates the Pod of manifest and returns what the server stored,
// without the fields the server sets per object (uid, times, versions).
func createPod(t testing.TB, manifest []byte, dryRun bool) (map[string]any, error) {
	t.Helper()
	u := podFrom(t, manifest)
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := client(t).Resource(pods).Namespace(u.GetNamespace()).Create(context.Background(), u, opts)
	if err != nil {
		return nil, err
	}
	return comparable(got), nil
}

func deletePod(t testing.TB, manifest []byte) {
	t.Helper()
	u := podFrom(t, manifest)
	zero := int64(0)
	err := client(t).Resource(pods).Namespace(u.GetNamespace()).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// comparable drops what differs between two creations of the same Pod.
func comparable(u *unstructured.Unstructured) map[string]any {
	obj := u.DeepCopy().Object
	meta, _ := obj["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
		delete(meta, f)
	}
	return obj
}

func annotation(pod map[string]any, key string) (string, bool) {
	u := unstructured.Unstructured{Object: pod}
	v, ok := u.GetAnnotations()[key]
	return v, ok
}

// applyPolicy installs the policy for the template file and waits until the
// API server runs it: probe, a Pod manifest the policy injects, is created
// with a server-side dry run until it comes back with a status record.
func applyPolicy(t testing.TB, templateFile string, probe []byte, extra ...string) {
	t.Helper()
	prepareFor(t, templateFile)
	ensureNamespace(t, podFrom(t, probe).GetNamespace())
	args := append([]string{"policy", "--apply", "--template", templateFile}, extra...)
	if out, errOut, code := kubectlInject(t, args...); code != 0 {
		t.Fatalf("kubectl inject %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	// A test that fails must not leave its policy to the next tests.
	t.Cleanup(func() {
		kubectlInject(t, "policy", "--delete", "--template", templateFile)
		waitPolicyFor(t, statusKeyOf(t, templateFile), probe, false)
	})
	waitPolicyFor(t, statusKeyOf(t, templateFile), probe, true)
}

// deletePolicy removes the policy and waits until the API server stops
// running it.
func deletePolicy(t testing.TB, templateFile string, probe []byte) {
	t.Helper()
	if out, errOut, code := kubectlInject(t, "policy", "--delete", "--template", templateFile); code != 0 {
		t.Fatalf("kubectl inject policy --delete: exit %d\n%s%s", code, out, errOut)
	}
	waitPolicyFor(t, statusKeyOf(t, templateFile), probe, false)
}

// statusKeyOf returns the status annotation of the profile of a
// SidecarInjection file.
func statusKeyOf(t testing.TB, configFile string) string {
	t.Helper()
	return naming.StatusAnnotationFor(configOf(t, configFile).Settings.Profile)
}

// configOf parses a template or SidecarInjection file.
func configOf(t testing.TB, configFile string) *inject.Config {
	t.Helper()
	data, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := inject.ParseConfig(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitPolicy waits until the default profile's policy is active (or not).
func waitPolicy(t testing.TB, probe []byte, active bool) {
	t.Helper()
	waitPolicyFor(t, naming.StatusAnnotation, probe, active)
}

// waitPolicyFor waits until the probe gets a record in key (or not).
func waitPolicyFor(t testing.TB, key string, probe []byte, active bool) {
	t.Helper()
	waitProbe(t, probe, fmt.Sprintf("the policy of %s to become active=%v", key, active), func(pod map[string]any) bool {
		_, injected := annotation(pod, key)
		return injected == active
	})
}

// waitProbe creates probe with a server-side dry run until done accepts
// the Pod that comes back, for at most 60 s. The API server learns of
// policies created or deleted through its informers, a moment later: a
// test waits for the policy it needs, and for the ones it removed to be
// gone, so that no test sees another's policy.
func waitProbe(t testing.TB, probe []byte, what string, done func(pod map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := createPod(t, probe, true)
		if err == nil && done(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 60s for %s (last error: %v)", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writeFile writes data to a new file in t's temporary directory.
func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func toJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// coreInject runs the core on one manifest document, as kubectl inject
// --local does, and returns the output and the object's report entry.
func coreInject(t testing.TB, in *inject.Injector, manifest []byte) ([]byte, inject.Entry) {
	t.Helper()
	out, entries := in.ProcessText(inject.OpInject, manifest, 0)
	if len(entries) != 1 {
		t.Fatalf("want one report entry, got %d: %v\n%s", len(entries), entries, manifest)
	}
	return bytes.Clone(out), entries[0]
}

var _ = fmt.Sprintf
