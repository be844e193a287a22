package admission

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/mddoc"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

var (
	replicasets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	configmaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// warnings collects the API server's warnings.
// warningClient is an admin client whose warnings are collected in w.
func warningClient(t testing.TB) (*warnings, dynamic.Interface) {
	t.Helper()
	w := &warnings{}
	cfg := c.AdminConfig()
	cfg.WarningHandler = w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w, dc
}

type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.list, "\n")
}

const replicaSet = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 8080}]
`

// TestAdmissionLive installs the policy with kubectl inject policy --apply,
// creates Pods the way the ReplicaSet controller does (owned, named from
// the ReplicaSet), checks each is current for kubectl inject --check while
// the ReplicaSet stays as written, sees a conflicting Pod created unchanged
// with a warning naming the conflict, and removes the policy with --delete.
func TestAdmissionLive(t *testing.T) {
	c.Require(t)
	ctx := context.Background()
	ensureNamespace(t, "shop")
	probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: shop}\nspec:\n  containers: [{name: app, image: busybox}]\n")

	if out, errOut, code := kubectlInject(t, "policy", "--apply"); code != 0 {
		t.Fatalf("policy --apply: exit %d\n%s%s", code, out, errOut)
	} else if !strings.Contains(errOut, "mutatingadmissionpolicy.admissionregistration.k8s.io/kinject-envoy serverside-applied") {
		t.Errorf("policy --apply output: %s", errOut)
	}
	waitPolicy(t, probe, true)

	w, dc := warningClient(t)
	var rsObj map[string]any
	if err := yaml.Unmarshal([]byte(replicaSet), &rsObj); err != nil {
		t.Fatal(err)
	}
	rs, err := dc.Resource(replicasets).Namespace("shop").Create(ctx, &unstructured.Unstructured{Object: rsObj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	template, _, _ := unstructured.NestedMap(rs.Object, "spec", "template")
	for i := 0; i < 3; i++ {
		pod := ownedPod(rs, template)
		got, err := dc.Resource(pods).Namespace("shop").Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod %d: %v", i, err)
		}
		names, inits := containerNames(got), initContainerNames(got)
		if strings.Join(names, ",") != "web" || strings.Join(inits, ",") != "envoy" {
			t.Errorf("pod %s: containers %v, init containers %v, want web and the native sidecar envoy", got.GetName(), names, inits)
		}
		// A native sidecar is no container kubectl logs could pick: the
		// default-container annotation is left unset.
		if v, ok := got.GetAnnotations()[naming.DefaultContainerAnnotation]; ok {
			t.Errorf("pod %s: default container %q set for a native sidecar", got.GetName(), v)
		}
		checkCurrent(t, got)
	}
	after, err := dc.Resource(replicasets).Namespace("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tpl, _, _ := unstructured.NestedMap(after.Object, "spec", "template"); toJSON(tpl) != toJSON(template) {
		t.Errorf("the ReplicaSet's pod template changed (only Pods are injected):\n%s", toJSON(tpl))
	}

	// A Pod with its own "envoy" is created as it is, and the client is told
	// why. The validating policy may start a moment after the mutating one:
	// dry runs first, until the warning comes.
	conflict := podFrom(t, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: own-envoy, namespace: shop}\nspec:\n  containers: [{name: envoy, image: mine/envoy:1}]\n"))
	wantWarning := `sidecar not injected by kinject-envoy: spec.initContainers: container "envoy" already exists and was not injected by kubectl-inject`
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(w.all(), wantWarning) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, _ = dc.Resource(pods).Namespace("shop").Create(ctx, conflict, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}
	w.mu.Lock()
	w.list = nil
	w.mu.Unlock()
	got, err := dc.Resource(pods).Namespace("shop").Create(ctx, conflict, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a conflicting Pod must be created as it is, not rejected: %v", err)
	}
	if _, injected := got.GetAnnotations()[naming.StatusAnnotation]; injected || len(containerNames(got)) != 1 {
		t.Errorf("conflicting pod was changed: %v", toJSON(got.Object))
	}
	if !strings.Contains(w.all(), wantWarning) {
		t.Errorf("warnings %q do not contain %q", w.all(), wantWarning)
	}

	if out, errOut, code := kubectlInject(t, "policy", "--delete"); code != 0 {
		t.Fatalf("policy --delete: exit %d\n%s%s", code, out, errOut)
	} else if strings.Count(errOut, " deleted\n") != 4 {
		t.Errorf("policy --delete output: %s", errOut)
	}
	waitPolicy(t, probe, false)
	plain, err := dc.Resource(pods).Namespace("shop").Create(ctx, ownedPod(rs, template), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := containerNames(plain); len(names) != 1 {
		t.Errorf("after --delete a new Pod has containers %v, want only web", names)
	}
	if _, _, code := kubectlInject(t, "policy", "--delete"); code != 0 {
		t.Errorf("policy --delete of a deleted policy: exit %d, want 0 (reported as not found)", code)
	}
}

// ownedPod is a Pod as the ReplicaSet controller makes it: the template's
// metadata and spec, a generated name and a controller reference.
func ownedPod(rs *unstructured.Unstructured, template map[string]any) *unstructured.Unstructured {
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
	spec, _, _ := unstructured.NestedMap(template, "spec")
	labels, _, _ := unstructured.NestedStringMap(template, "metadata", "labels")
	pod.Object["spec"] = spec
	pod.SetLabels(labels)
	pod.SetGenerateName(rs.GetName() + "-")
	pod.SetNamespace(rs.GetNamespace())
	yes := true
	pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.GetName(), UID: rs.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}})
	return pod
}

func containerNames(pod *unstructured.Unstructured) []string {
	return namesIn(pod, "containers")
}

// initContainerNames lists the Pod's init containers (native sidecars
// among them) by name.
func initContainerNames(pod *unstructured.Unstructured) []string {
	return namesIn(pod, "initContainers")
}

func namesIn(pod *unstructured.Unstructured, list string) []string {
	items, _, _ := unstructured.NestedSlice(pod.Object, "spec", list)
	var names []string
	for _, c := range items {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
	}
	return names
}

// checkCurrent runs kubectl inject --check on the Pod as stored: an
// admission-injected Pod must count as injected with the current template.
func checkCurrent(t *testing.T, pod *unstructured.Unstructured) {
	t.Helper()
	data, err := yaml.Marshal(pod.Object)
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "pod.yaml", data)
	out, errOut, code := kubectlInject(t, "--local", "-f", path, "--check")
	if code != 0 || !strings.Contains(errOut, "unchanged") {
		t.Errorf("kubectl inject --local --check on pod %s: exit %d\n%s%s", pod.GetName(), code, out, errOut)
	}
}

// TestAdmissionDocPolicy runs every command of the "The policy" block of
// docs/admission.md against the API server, in order: each must succeed,
// and the printed policy must be examples/admission/policy.yaml.
func TestAdmissionDocPolicy(t *testing.T) {
	c.Require(t)
	// The policy's commands, after the README's Turn it on safely ones.
	const doc = "docs/admission.md"
	block := mddoc.ShBlock(t, doc, "## The policy")
	ensureNamespace(t, "shop")
	ensureNamespace(t, "payments")
	// Leave no policy behind for the other tests, whatever happens here.
	t.Cleanup(func() {
		kubectlInject(t, "policy", "--delete")
		kubectlInject(t, "policy", "--delete", "--name", "mesh")
		kubectlInject(t, "policy", "--delete", "--profile", "logs")
		for _, ns := range []string{"default", "shop", "payments"} {
			probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: readme-probe, namespace: " + ns + "}\nspec:\n  containers: [{name: app, image: busybox}]\n")
			waitProbe(t, probe, "the policies of "+doc+" to be gone in "+ns, func(pod map[string]any) bool {
				return len(containerNames(&unstructured.Unstructured{Object: pod})) == 1
			})
		}
	})
	// The doc's second profile: a log shipper.
	logs := writeFile(t, "logs.yaml", []byte("containers:\n- name: log-shipper\n  image: fluent/fluent-bit:3.2\n"))
	ran := 0
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 3 || fields[0] != "kubectl" || fields[1] != "inject" || fields[2] != "policy" {
			t.Fatalf("%s: %q is not a kubectl inject policy command", doc, line)
		}
		args := fields[2:]
		for i, a := range args {
			switch a {
			case "sidecar.yaml":
				args[i] = "../../examples/cli/sidecar.yaml"
			case "logs.yaml":
				args[i] = logs
			}
		}
		out, errOut, code := kubectlInject(t, args...)
		want := 0
		if slices.Contains(args, "--diff") {
			want = 1 // as kubectl diff: the policy installed would change
			if !strings.Contains(out, "+++ applied/mutatingadmissionpolicy.admissionregistration.k8s.io/kinject-envoy\n") {
				t.Errorf("%s: %s: no diff of the mutating policy:\n%s", doc, line, out)
			}
		}
		if code != want {
			t.Fatalf("%s: %s: exit %d, want %d\n%s", doc, line, code, want, errOut)
		}
		if len(args) == 1 {
			if want, _ := os.ReadFile("../../examples/admission/policy.yaml"); out != string(want) {
				t.Errorf("%s: %s: the output is not examples/admission/policy.yaml", doc, line)
			}
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("%s: only %d commands found", doc, ran)
	}
}

// TestPolicyFromSeedConfigMap compiles the policy from the seed's
// envoy-initializer ConfigMap read from the cluster, and the seed's sidecar
// is what new Pods get.
func TestPolicyFromSeedConfigMap(t *testing.T) {
	c.Require(t)
	ensureNamespace(t, "mesh")
	seed, err := os.ReadFile("../../examples/seed/envoy-initializer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cm := podFrom(t, seed) // any object: parsed, namespace defaulted
	cm.SetNamespace("mesh")

	if _, err := client(t).Resource(configmaps).Namespace("mesh").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kubectlInject(t, "policy", "--template-configmap", "mesh/envoy-initializer", "--name", "seed", "--apply", "-o", "yaml")
	if code != 0 || !strings.Contains(out, "lyft/envoy:845747db88f102c0fd262ab234308e9e22f693a1") {
		t.Fatalf("policy --template-configmap: exit %d\n%s%s", code, out, errOut)
	}
	probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: seed-probe, namespace: mesh}\nspec:\n  containers: [{name: app, image: busybox, ports: [{containerPort: 8080}]}]\n")
	// Wait for this policy's sidecar, not just any record: a policy
	// another test removed may still run for a moment.
	waitProbe(t, probe, "the seed's policy to add envoy", func(pod map[string]any) bool {
		return slices.Contains(containerNames(&unstructured.Unstructured{Object: pod}), "envoy")
	})
	got, err := createPod(t, probe, true)
	if err != nil {
		t.Fatal(err)
	}
	if names := containerNames(&unstructured.Unstructured{Object: got}); strings.Join(names, ",") != "app,envoy" {
		t.Errorf("containers %v, want app,envoy", names)
	}
	if _, _, code := kubectlInject(t, "policy", "--delete", "--name", "seed"); code != 0 {
		t.Errorf("policy --delete --name seed: exit %d", code)
	}
	waitPolicy(t, probe, false)
}
