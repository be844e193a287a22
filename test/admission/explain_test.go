package admission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// TestExplainLive creates one Pod for each reason the policy leaves a Pod
// alone (and one it injects) on the API server, checks the skip
// annotation the policy wrote, and holds kubectl inject explain's lines
// to each, with its exit code; then a namespace not enabled, a missing
// ConfigMap, an outdated policy, and status's list of the Pods left alone.
func TestExplainLive(t *testing.T) {
	c.Require(t)
	const profile, shop, off = "exp", "explain-shop", "explain-off"
	plainNamespace(t, shop)
	plainNamespace(t, off)
	run := func(args ...string) (string, string, int) {
		out, errOut, code := kubectlInject(t, append(args, "--profile", profile)...)
		t.Logf("kubectl inject %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		return out, errOut, code
	}
	if _, _, code := run("enable", shop); code != 0 {
		t.Fatal("enable")
	}
	if _, _, code := run("policy", "--apply"); code != 0 {
		t.Fatal("policy --apply")
	}
	t.Cleanup(func() { run("policy", "--delete") })
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	pod := func(ns, name, annotations, spec string) []byte {
		return []byte(fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, annotations: {%s}}\nspec:\n%s", name, ns, annotations, spec))
	}
	app := "  containers: [{name: app, image: nginx}]\n"
	waitPolicyFor(t, in.StatusAnnotation(), pod(shop, "probe", "", app), true)
	policy := "  policy:   kinject-envoy-exp (installed, template " + in.TemplateHash() + ")"
	for _, c := range []struct {
		name, annotations, spec, code, verdict, hint string
	}{
		{"plain", "", app, "", "  verdict:  injected: kinject-envoy-exp adds the sidecar (template " + in.TemplateHash() + ")", "  sidecar:  current"},
		{"optout", `exp.sidecar.kinject.dev/inject: "false"`, app, "opted_out",
			`  verdict:  not injected: opted out: the annotation exp.sidecar.kinject.dev/inject is "false"`,
			"  to change: remove the annotation exp.sidecar.kinject.dev/inject from the Pod (its workload's pod template)"},
		{"hostnet", "", "  hostNetwork: true\n" + app, "host_network",
			"  verdict:  not injected: the Pod uses the host's network: a sidecar would share the node's ports",
			"  to change: kubectl inject policy --apply --inject-host-network --profile exp (for every such Pod)"},
		{"mesh", "", "  containers: [{name: app, image: nginx}, {name: linkerd-proxy, image: linkerd/proxy}]\n", "other_mesh",
			"  verdict:  not injected: the Pod already has another mesh's proxy (istio-proxy or linkerd-proxy)", "  to change: remove the other mesh's injection first"},
		{"port", "", "  containers: [{name: app, image: nginx, ports: [{containerPort: 9901}]}]\n", "conflict",
			`  verdict:  not injected: conflict: spec.containers: sidecar "envoy" binds port 9901 (Envoy's admin API on 127.0.0.1), which container "app" already uses (the app must listen on another port)`,
			"  to change: change the Pod (or the template) so that they do not clash"},
		{"badvalue", `exp.sidecar.kinject.dev/concurrency: "many"`, app, "invalid_object",
			`  verdict:  not injected: a value the core refuses: metadata.annotations["exp.sidecar.kinject.dev/concurrency"]: "many" is not an integer such as 2 (it sets containers[envoy].args[--concurrency])`,
			"  to change: fix the annotation the message names"},
	} {
		manifest := pod(shop, c.name, c.annotations, c.spec)
		stored, err := createPod(t, manifest, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Cleanup(func() { deletePod(t, manifest) })
		mark, _ := annotation(stored, naming.SkippedAnnotationFor(profile))
		gotCode, why := admission.MarkReason(mark)
		refused := c.code == "conflict" || c.code == "invalid_object"
		if gotCode != c.code || refused != (why != "") || refused && !strings.HasSuffix(c.verdict, ": "+why) {
			t.Errorf("%s: skip annotation %q, want %q (with the verdict's message when it is a refusal)", c.name, mark, c.code)
		}
		out, _, code := run("explain", "pod/"+c.name, "-n", shop)
		expectLines(t, "explain pod/"+c.name, out, "", "pod/"+c.name+" in namespace "+shop+`, profile "exp":`, policy, c.verdict, c.hint)
		if want := map[bool]int{true: 0, false: 1}[c.code == ""]; code != want {
			t.Errorf("explain pod/%s: exit %d, want %d", c.name, code, want)
		}
	}

	// A namespace not enabled; the embedded default's ConfigMap-free
	// template, then the seed's, which needs the ConfigMap envoy.
	file := writeFile(t, "off.yaml", pod(off, "plain", "", app))
	out, _, code := run("explain", "-f", file)
	expectLines(t, "a namespace not enabled", out, "", "pod/plain in namespace "+off+`, profile "exp":`, policy,
		"  verdict:  not injected: namespace explain-off is not enabled: it lacks the label exp.sidecar.kinject.dev/inject=enabled",
		"  to change: kubectl inject enable explain-off --profile exp")
	if code != 1 {
		t.Errorf("a namespace not enabled: exit %d", code)
	}
	file = writeFile(t, "shop.yaml", pod(shop, "seeded", "", app))
	out, _, _ = run("explain", "-f", file, "--template", seedTemplateFile(t))
	if !strings.Contains(out, "  verdict:  not injected: namespace explain-shop has no configmap/envoy, which the sidecar needs (volumes[envoy-conf].configMap.name): the policy leaves new Pods as created\n  to change: create configmap/envoy in explain-shop\n") {
		t.Errorf("a missing ConfigMap:\n%s", out)
	}

	// A workload, read from the cluster; a Pod of a system namespace.
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: " + shop + "}\nspec:\n  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: app, image: nginx}]\n"
	created := podFrom(t, []byte(deploy))
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	if _, err := client(t).Resource(deployments).Namespace(shop).Create(context.Background(), created, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, _, code = run("explain", "deploy/web", "-n", shop)
	expectLines(t, "explain deploy/web", out, "", "deployment/web in namespace "+shop+`, profile "exp":`, policy,
		"  verdict:  injected: kinject-envoy-exp adds the sidecar (template "+in.TemplateHash()+")")
	if code != 0 {
		t.Errorf("explain deploy/web: exit %d", code)
	}
	out, _, _ = run("explain", "-f", writeFile(t, "sys.yaml", pod("kube-system", "sys", "", app)))
	if !strings.Contains(out, "  verdict:  not injected: kube-system is a system namespace: the policy never injects there unless --namespaces names it\n") {
		t.Errorf("a system namespace:\n%s", out)
	}

	// An installed policy compiled by another version.
	patch := []byte(`{"metadata":{"annotations":{"` + admission.PolicyHashAnnotation + `":"0000"}}}`)
	if _, err := client(t).Resource(mutatingPolicies).Patch(context.Background(), "kinject-envoy-exp", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	out, _, _ = run("explain", "pod/optout", "-n", shop)
	if !strings.Contains(out, "  note:     kinject-envoy-exp was compiled by another version or with other settings: apply it again (kubectl inject check says how); explained as installed\n") {
		t.Errorf("an outdated policy:\n%s", out)
	}

	// An existing Pod whose sidecar is older than the installed policy's.
	// (--force-conflicts: the test patched an annotation above.)
	if _, _, code := run("policy", "--apply", "--force-conflicts", "--image", "registry.example/envoy:x"); code != 0 {
		t.Fatal("policy --apply --image")
	}
	newer, err := inject.New(inject.DefaultTemplate(), inject.Settings{Profile: profile, Image: "registry.example/envoy:x"})
	if err != nil {
		t.Fatal(err)
	}
	out, _, code = run("explain", "pod/plain", "-n", shop)
	expectLines(t, "explain an outdated Pod", out, "", "pod/plain in namespace "+shop+`, profile "exp":`,
		"  policy:   kinject-envoy-exp (installed, template "+newer.TemplateHash()+")",
		"  verdict:  injected: kinject-envoy-exp adds the sidecar (template "+newer.TemplateHash()+")",
		"  sidecar:  outdated",
		"  restart:  delete and create the Pod again (kubectl inject restart pod/plain -n explain-shop --recreate --profile exp)")
	if code != 1 {
		t.Errorf("explain an outdated Pod: exit %d, want 1", code)
	}

	// status lists the Pods left alone, by reason.
	_, errOut, _ := run("status", "-n", shop)
	for _, line := range []string{
		"left alone at admission (conflict): 1 Pod: explain-shop/port",
		"left alone at admission (host_network): 1 Pod: explain-shop/hostnet",
		"left alone at admission (invalid_object): 1 Pod: explain-shop/badvalue",
		"left alone at admission (opted_out): 1 Pod: explain-shop/optout",
		"left alone at admission (other_mesh): 1 Pod: explain-shop/mesh",
	} {
		if !strings.Contains(errOut, line+"\n") {
			t.Errorf("status lacks %q:\n%s", line, errOut)
		}
	}
}
