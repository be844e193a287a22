package admission

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/internal/mddoc"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// plainNamespace creates ns (if needed) with no label and no ConfigMap.
func plainNamespace(t testing.TB, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := client(t).Resource(namespaces).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// envoyConfigMap creates the ConfigMap envoy the embedded default mounts,
// and removes it at the end of the test.
func envoyConfigMap(t testing.TB, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "envoy"}}}
	_, err := client(t).Resource(configmaps).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client(t).Resource(configmaps).Namespace(ns).Delete(context.Background(), "envoy", metav1.DeleteOptions{})
	})
}

func podIn(ns, name string) []byte {
	return []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n  containers: [{name: app, image: busybox}]\n")
}

// injected creates manifest with a server-side dry run and reports whether
// the default profile's sidecar came back, with the warnings.
func injected(t testing.TB, manifest []byte) (bool, string) {
	t.Helper()
	w, dc := warningClient(t)
	u := podFrom(t, manifest)
	got, err := dc.Resource(pods).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("create %s: %v", u.GetName(), err)
	}
	_, ok := got.GetAnnotations()[naming.StatusAnnotation]
	return ok, w.all()
}

// eventually waits up to 60 s for the Pod of manifest to be injected (or not).
func eventually(t testing.TB, manifest []byte, want bool, what string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, warned := injected(t, manifest)
		if got == want {
			return warned
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 60s for %s (injected=%v, warnings %q)", what, got, warned)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestTurnOnSafely follows the README and docs/admission.md: the policy applied as they say
// injects only enabled namespaces that hold what the sidecar needs, never
// kube-system; enable and disable switch a namespace; --namespaces
// kube-system injects there, with a warning.
func TestTurnOnSafely(t *testing.T) {
	c.Require(t)
	const on, off, system = "safe-on", "safe-off", "kube-system"
	plainNamespace(t, on)
	plainNamespace(t, off)
	envoyConfigMap(t, on)
	envoyConfigMap(t, off)
	if _, errOut, code := kubectlInject(t, "enable", on); code != 0 || !strings.Contains(errOut, "namespace/"+on+" enabled (sidecar.kinject.dev/inject=enabled)") {
		t.Fatalf("enable: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() { kubectlInject(t, "disable", on) })
	if _, errOut, code := kubectlInject(t, "policy", "--apply"); code != 0 {
		t.Fatalf("policy --apply: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() { kubectlInject(t, "policy", "--delete") })
	eventually(t, podIn(on, "probe"), true, "the policy to inject the enabled namespace")

	// The system namespace (its ConfigMap there too) and a namespace that
	// is not enabled stay plain (once an earlier test's binding of the
	// same policy is gone from the API server's cache).
	envoyConfigMap(t, system)
	for _, ns := range []string{system, off} {
		eventually(t, podIn(ns, "plain"), false, "a Pod in "+ns+" to stay plain")
	}
	// A Pod cannot opt in from a namespace that is not enabled.
	optIn := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: opt-in, namespace: " + off + ", annotations: {sidecar.kinject.dev/inject: \"true\"}}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	if got, _ := injected(t, optIn); got {
		t.Error("a Pod opted in from a namespace that is not enabled")
	}
	// Inside an enabled namespace a Pod still opts out.
	optOut := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: opt-out, namespace: " + on + ", annotations: {sidecar.kinject.dev/inject: \"false\"}}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	if got, _ := injected(t, optOut); got {
		t.Error("a Pod annotated inject: false was injected in an enabled namespace")
	}

	// A dry run says what it would do and changes nothing.
	out, errOut, code := kubectlInject(t, "enable", off, "--dry-run=server", "-o", "name")
	if code != 0 || out != "namespace/"+off+"\n" || !strings.Contains(errOut, "namespace/"+off+" enabled (sidecar.kinject.dev/inject=enabled) (server dry run)") {
		t.Errorf("enable --dry-run=server -o name: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	ns, err := client(t).Resource(namespaces).Get(context.Background(), off, metav1.GetOptions{})
	if err != nil || ns.GetLabels()[naming.NamespaceLabelFor("")] != "" {
		t.Errorf("a dry run labelled the namespace: %v %v", err, ns.GetLabels())
	}

	// enable, then disable.
	if _, errOut, code := kubectlInject(t, "enable", off); code != 0 {
		t.Fatalf("enable %s: exit %d\n%s", off, code, errOut)
	}
	eventually(t, podIn(off, "now-on"), true, "enable to take effect")
	if _, errOut, code := kubectlInject(t, "enable", off); code != 0 || !strings.Contains(errOut, "namespace/"+off+" unchanged") {
		t.Errorf("enable again: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := kubectlInject(t, "disable", off); code != 0 || !strings.Contains(errOut, "namespace/"+off+" disabled (sidecar.kinject.dev/inject removed)") {
		t.Fatalf("disable: exit %d\n%s", code, errOut)
	}
	eventually(t, podIn(off, "now-off"), false, "disable to take effect")

	// Named, the system namespace is injected, and the command warns.
	_, errOut, code = kubectlInject(t, "policy", "--apply", "--namespaces", system)
	if code != 0 || !strings.Contains(errOut, "Warning: kube-system is a system namespace") {
		t.Fatalf("policy --apply --namespaces kube-system: exit %d\n%s", code, errOut)
	}
	eventually(t, podIn(system, "named"), true, "--namespaces kube-system to inject there")
	eventually(t, podIn(on, "not-named"), false, "--namespaces kube-system to leave the enabled namespace out")
}

// TestMissingConfigMapAtAdmission: in an enabled namespace without the
// ConfigMap the sidecar mounts, the policy leaves Pods as created and the
// client is warned; once it exists, Pods are injected.
func TestMissingConfigMapAtAdmission(t *testing.T) {
	c.Require(t)
	const ns, probeNS = "safe-missing", "safe-probe"
	plainNamespace(t, ns)
	plainNamespace(t, probeNS)
	envoyConfigMap(t, probeNS)
	for _, n := range []string{ns, probeNS} {
		if _, errOut, code := kubectlInject(t, "enable", n); code != 0 {
			t.Fatalf("enable %s: exit %d\n%s", n, code, errOut)
		}
	}
	t.Cleanup(func() { kubectlInject(t, "disable", ns, probeNS) })
	seed := seedTemplateFile(t)
	if _, errOut, code := kubectlInject(t, "policy", "--apply", "--template", seed); code != 0 {
		t.Fatalf("policy --apply: exit %d\n%s", code, errOut)
	}
	t.Cleanup(func() { kubectlInject(t, "policy", "--delete", "--template", seed) })
	eventually(t, podIn(probeNS, "probe"), true, "the policy to be active")

	want := `sidecar not injected by kinject-envoy: the sidecar needs configmap/envoy (volumes[envoy-conf].configMap.name), and namespace ` + ns + ` has none`
	var warned string
	deadline := time.Now().Add(60 * time.Second)
	for {
		var got bool
		got, warned = injected(t, podIn(ns, "waits"))
		if got {
			t.Fatal("a Pod was injected in a namespace without the sidecar's ConfigMap")
		}
		if strings.Contains(warned, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(warned, want) {
		t.Errorf("warnings %q lack %q", warned, want)
	}
	envoyConfigMap(t, ns)
	eventually(t, podIn(ns, "starts"), true, "the Pod to be injected once the ConfigMap exists")
}

// TestPolicyMigration: a policy installed by an earlier version (its
// binding matched every namespace, the policy had no parameter) is shown
// by policy --apply --diff and migrated by policy --apply.
func TestPolicyMigration(t *testing.T) {
	c.Require(t)
	seed := seedTemplateFile(t)
	const name = "migrate"
	t.Cleanup(func() { kubectlInject(t, "policy", "--delete", "--name", name, "--template", seed) })
	out, errOut, code := kubectlInject(t, "policy", "--name", name, "--template", seed, "-o", "json")
	if code != 0 {
		t.Fatalf("policy -o json: %s", errOut)
	}
	var list struct{ Items []map[string]any }
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	resources := map[string]string{
		"MutatingAdmissionPolicy": "mutatingadmissionpolicies", "MutatingAdmissionPolicyBinding": "mutatingadmissionpolicybindings",
		"ValidatingAdmissionPolicy": "validatingadmissionpolicies", "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
	}
	for _, item := range list.Items {
		u := &unstructured.Unstructured{Object: item}
		// What the earlier version wrote: no namespace selector, no parameter.
		unstructured.RemoveNestedField(u.Object, "spec", "matchResources")
		unstructured.RemoveNestedField(u.Object, "spec", "paramRef")
		unstructured.RemoveNestedField(u.Object, "spec", "paramKind")
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations", "sidecar.kinject.dev/policy")
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resources[u.GetKind()]}
		if _, err := client(t).Resource(gvr).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "kubectl-inject"}); err != nil {
			t.Fatalf("apply the earlier %s: %v", u.GetKind(), err)
		}
	}

	out, errOut, code = kubectlInject(t, "policy", "--apply", "--diff", "--name", name, "--template", seed, "--color", "never")
	if code != 1 {
		t.Fatalf("policy --apply --diff: exit %d, want 1 (a change)\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"+++ applied/mutatingadmissionpolicybinding.admissionregistration.k8s.io/kinject-" + name,
		"+    namespaceSelector:",
		"+      - key: sidecar.kinject.dev/inject",
		"+  paramRef:",
		"+    name: envoy",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--diff lacks %q:\n%s", want, out)
		}
	}

	if _, errOut, code := kubectlInject(t, "policy", "--apply", "--name", name, "--template", seed); code != 0 {
		t.Fatalf("policy --apply: %s", errOut)
	}
	b, err := client(t).Resource(schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}).
		Get(context.Background(), "kinject-"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	terms, _, _ := unstructured.NestedSlice(b.Object, "spec", "matchResources", "namespaceSelector", "matchExpressions")
	if len(terms) != 2 || !strings.Contains(toJSON(terms), `"sidecar.kinject.dev/inject"`) || !strings.Contains(toJSON(terms), `"kube-system"`) {
		t.Errorf("the migrated binding selects %s", toJSON(terms))
	}
	if out, _, code := kubectlInject(t, "policy", "--apply", "--diff", "--name", name, "--template", seed); code != 0 {
		t.Errorf("after --apply, --diff: exit %d\n%s", code, out)
	}
}

// TestREADMETurnOnSafely runs the README's "Turn it on safely" commands as
// written (kubectl apply through the API), then creates Pods: the one in
// the enabled namespace gets the sidecar, kube-system's does not.
func TestREADMETurnOnSafely(t *testing.T) {
	c.Require(t)
	block := mddoc.ShBlock(t, "README.md", "### Turn it on safely")
	const ns = "readme-safe"
	plainNamespace(t, ns)
	t.Cleanup(func() {
		kubectlInject(t, "policy", "--delete")
		kubectlInject(t, "disable", ns)
	})
	var ran []string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(strings.ReplaceAll(line, "shop", ns))
		switch {
		case len(fields) == 0:
			continue
		case len(fields) > 2 && fields[0] == "kubectl" && fields[1] == "inject":
			args := append([]string(nil), fields[2:]...)
			for i := range args {
				if strings.HasPrefix(args[i], "examples/") {
					args[i] = "../../" + args[i] // the README's paths are the repository's
				}
			}
			out, errOut, code := kubectlInject(t, args...)
			if fields[2] == "explain" && (code != 1 || !strings.Contains(out, "  verdict:  injected: kinject-envoy adds the sidecar") ||
				!strings.Contains(out, "  verdict:  not injected: opted out")) {
				// The example holds a Deployment that opts out.
				t.Errorf("README: %s: exit %d, want 1 with a verdict of each kind\n%s%s", line, code, out, errOut)
			}
			if fields[2] != "check" && fields[2] != "explain" && code != 0 {
				t.Fatalf("README: %s: exit %d\n%s%s", line, code, out, errOut)
			}
		case len(fields) == 6 && fields[0] == "kubectl" && fields[1] == "apply" && fields[2] == "-n" && fields[4] == "-f":
			data, err := os.ReadFile("../../" + fields[5])
			if err != nil {
				t.Fatal(err)
			}
			u := podFrom(t, data) // any object: parsed
			u.SetNamespace(fields[3])
			if _, err := client(t).Resource(configmaps).Namespace(fields[3]).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
				t.Fatalf("README: %s: %v", line, err)
			}
			t.Cleanup(func() {
				_ = client(t).Resource(configmaps).Namespace(fields[3]).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
			})
		default:
			t.Fatalf("README: %q is not a command this test knows", line)
		}
		ran = append(ran, fields[1]+" "+fields[2])
	}
	if strings.Join(ran, ",") != "inject check,inject enable,inject policy,inject explain" {
		t.Errorf("README: ran %v", ran)
	}
	eventually(t, podIn(ns, "app"), true, "the README's policy to inject "+ns)
	envoyConfigMap(t, "kube-system")
	eventually(t, podIn("kube-system", "coredns-like"), false, "the README's policy to leave kube-system out")
}

// TestExcludeNamespacesAtAdmission: an enabled namespace that
// --exclude-namespaces names stays plain; the other is injected.
func TestExcludeNamespacesAtAdmission(t *testing.T) {
	c.Require(t)
	const kept, left = "exclude-kept", "exclude-left"
	for _, ns := range []string{kept, left} {
		plainNamespace(t, ns)
		envoyConfigMap(t, ns)
		if _, errOut, code := kubectlInject(t, "enable", ns); code != 0 {
			t.Fatalf("enable %s: %s", ns, errOut)
		}
	}
	t.Cleanup(func() { kubectlInject(t, "disable", kept, left) })
	if _, errOut, code := kubectlInject(t, "policy", "--apply", "--exclude-namespaces", left); code != 0 {
		t.Fatalf("policy --apply --exclude-namespaces: %s", errOut)
	}
	t.Cleanup(func() { kubectlInject(t, "policy", "--delete") })
	eventually(t, podIn(kept, "probe"), true, "the policy to inject "+kept)
	// The API server may still run an earlier test's binding of the same
	// policy for a moment: wait for this one's.
	eventually(t, podIn(left, "excluded"), false, "the excluded namespace "+left+" to stay plain")
}
