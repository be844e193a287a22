package live

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSystemNamespacesLeftOut: a selection across namespaces (-A, --all)
// never changes kube-system; naming it with -n does, with a warning.
func TestSystemNamespacesLeftOut(t *testing.T) {
	c.Require(t)
	const system = "kube-system"
	name := "kinject-system-probe"
	create(t, system, deployments, deployment(name, ", kinject-probe: safety"))
	t.Cleanup(func() {
		_ = client(t).Resource(deployments).Namespace(system).Delete(ctx(t), name, metav1.DeleteOptions{})
	})
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ", kinject-probe: safety"))

	// -l across namespaces (the label keeps other tests' objects out).
	r := inject(t, "deploy", "-l", "kinject-probe=safety", "-A")
	expectCode(t, r, 0)
	expectStderr(t, r, system+": deployment.apps/"+name+" skipped: system_namespace", ns+": deployment.apps/web injected")
	if r.requests[http.MethodPatch] != 1 {
		t.Errorf("PATCH requests: %d, want 1 (web only)", r.requests[http.MethodPatch])
	}
	if hasContainer(t, get(t, system, deployments, name), "envoy", "spec", "template", "spec") {
		t.Fatal("kube-system's Deployment was injected by -A")
	}

	// --all -A is a selection too (a client dry run: other tests' objects stay).
	// (Other tests' objects may fail; only the system namespace's line counts.)
	r = inject(t, "deploy", "--all", "-A", "--dry-run=client")
	expectStderr(t, r, system+": deployment.apps/"+name+" skipped: system_namespace")
	if r.writes() != 0 {
		t.Errorf("writes: %v, want none", r.requests)
	}

	// status -A still reports it: it changes nothing.
	r = inject(t, "status", "-A", "-l", "kinject-probe=safety")
	if !strings.Contains(r.stdout, system) || !strings.Contains(r.stdout, "deployment.apps/"+name) {
		t.Errorf("status -A leaves out %s:\n%s", system, r.stdout)
	}

	// Named: injected, with a warning. The sidecar's ConfigMap must be there.
	create(t, system, configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: envoy}\n")
	t.Cleanup(func() {
		_ = client(t).Resource(configmaps).Namespace(system).Delete(ctx(t), "envoy", metav1.DeleteOptions{})
	})
	r = inject(t, "-n", system, "deploy/"+name)
	expectCode(t, r, 0)
	expectStderr(t, r, "Warning: kube-system is a system namespace", "deployment.apps/"+name+" injected")
	if !hasContainer(t, get(t, system, deployments, name), "envoy", "spec", "template", "spec") {
		t.Error("-n kube-system deploy/x did not inject")
	}
}

// TestMissingReference: a sidecar whose ConfigMap the namespace lacks is
// not rolled out: zero PATCH, the object unchanged, a missing_reference
// error naming kind, name and namespace; once it exists, it injects.
// seedTemplate writes the seed's sidecar, which mounts the ConfigMap envoy
// of the Pod's namespace (the embedded default references nothing).
func seedTemplate(t *testing.T) string {
	return writeFile(t, "seed.yaml", `containers:
- name: envoy
  image: envoyproxy/envoy:v1.40.0
  args: [--config-path, /etc/envoy/envoy.json]
  volumeMounts: [{name: envoy-conf, mountPath: /etc/envoy}]
volumes:
- name: envoy-conf
  configMap: {name: envoy}
`)
}

func TestMissingReference(t *testing.T) {
	c.Require(t)
	ns := bareNamespace(t)
	seed := seedTemplate(t)
	orig := create(t, ns, deployments, deployment("web", ""))
	for _, args := range [][]string{
		{"deployment/web", "-n", ns},
		{"deployment/web", "-n", ns, "--dry-run=server"},
		{"deployment/web", "-n", ns, "--diff"},
	} {
		r := inject(t, append(args, "--template", seed)...)
		if r.code == 0 {
			t.Fatalf("%v: exit 0, want a failure", args)
		}
		expectStderr(t, r, "deployment.apps/web error: missing_reference: the sidecar needs configmap/envoy (volumes[envoy-conf].configMap.name), and namespace \""+ns+"\" has none",
			"--allow-missing-references")
		if r.requests[http.MethodPatch] != 0 {
			t.Errorf("%v: %d PATCH sent, want 0", args, r.requests[http.MethodPatch])
		}
	}
	if got := get(t, ns, deployments, "web"); got.GetResourceVersion() != orig.GetResourceVersion() {
		t.Error("the Deployment changed")
	}

	// The override: injected although its Pods will wait, and status says so.
	create(t, ns, deployments, deployment("api", ""))
	r := inject(t, "deployment/api", "-n", ns, "--allow-missing-references", "--template", seed)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/api injected")
	r = inject(t, "status", "-n", ns, "--check", "--template", seed)
	expectCode(t, r, 1)
	expectStderr(t, r, "deployment.apps/api: its sidecar needs configmap/envoy, missing from namespace "+ns+": its Pods wait for it")
	if !strings.Contains(r.stdout, "deployment.apps/api   current,waiting:configmap/envoy") {
		t.Errorf("status table lacks the waiting mark:\n%s", r.stdout)
	}

	create(t, ns, configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: envoy}\n")
	r = inject(t, "deployment/web", "-n", ns, "--template", seed)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web injected")
	if !hasContainer(t, get(t, ns, deployments, "web"), "envoy", "spec", "template", "spec") {
		t.Error("not injected once the ConfigMap exists")
	}
	r = inject(t, "status", "-n", ns, "--check", "--template", seed)
	expectCode(t, r, 0)
	if strings.Contains(r.stdout, "waiting") {
		t.Errorf("still waiting once the ConfigMap exists:\n%s", r.stdout)
	}
}

// TestMissingReferenceKinds: Secrets and PVCs are checked too; optional
// references are not.
func TestMissingReferenceKinds(t *testing.T) {
	c.Require(t)
	ns := bareNamespace(t)
	create(t, ns, deployments, deployment("web", ""))
	tmpl := writeFile(t, "agent.yaml", `containers:
- name: agent
  image: agent:1
  envFrom:
  - secretRef: {name: agent-creds}
  - configMapRef: {name: agent-extra, optional: true}
volumes:
- name: data
  persistentVolumeClaim: {claimName: agent-data}
`)
	r := inject(t, "deployment/web", "-n", ns, "--template", tmpl)
	expectCode(t, r, 1)
	expectStderr(t, r, "persistentvolumeclaim/agent-data (volumes[data].persistentVolumeClaim.claimName)",
		"secret/agent-creds (containers[agent].envFrom[0].secretRef.name)")
	if strings.Contains(r.stderr, "agent-extra") {
		t.Error("an optional reference was reported missing")
	}
	if r.writes() != 0 {
		t.Errorf("writes: %v", r.requests)
	}
}

// TestReferenceCheckCost: the check costs one GET per referenced object
// and namespace, however many objects of the namespace are injected.
func TestReferenceCheckCost(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		create(t, ns, deployments, deployment(name, ""))
	}
	var lookups atomic.Int32
	r := run(t, runOpts{wrap: func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/namespaces/"+ns+"/configmaps/envoy") {
				lookups.Add(1)
			}
			return rt.RoundTrip(req)
		})
	}}, "deploy", "--all", "-n", ns, "--template", seedTemplate(t))
	expectCode(t, r, 0)
	if got := strings.Count(r.stderr, " injected"); got != 5 {
		t.Errorf("%d injected, want 5:\n%s", got, r.stderr)
	}
	if got := lookups.Load(); got != 1 {
		t.Errorf("%d lookups of the ConfigMap for 5 Deployments, want 1", got)
	}
}

// TestExcludeNamespacesLive: --exclude-namespaces leaves a namespace's
// objects alone in a selection across namespaces.
func TestExcludeNamespacesLive(t *testing.T) {
	c.Require(t)
	kept, left := namespace(t), namespace(t)
	for _, ns := range []string{kept, left} {
		create(t, ns, deployments, deployment("web", ", kinject-probe: exclude"))
	}
	r := inject(t, "deploy", "-l", "kinject-probe=exclude", "-A", "--exclude-namespaces", left)
	expectCode(t, r, 0)
	expectStderr(t, r, kept+": deployment.apps/web injected", left+": deployment.apps/web skipped: namespace_not_selected")
	if r.requests[http.MethodPatch] != 1 {
		t.Errorf("PATCH requests: %d, want 1", r.requests[http.MethodPatch])
	}
	if hasContainer(t, get(t, left, deployments, "web"), "envoy", "spec", "template", "spec") {
		t.Error("the excluded namespace's Deployment was injected")
	}
}

// TestAllNamespacesOwnCluster runs kubectl inject deploy --all -A for real
// on a cluster of its own (no other test's objects): every Deployment is
// injected but kube-system's, which gets no PATCH.
func TestAllNamespacesOwnCluster(t *testing.T) {
	c.Require(t)
	own, dyn := ownCluster(t)
	ctx := ctx(t)
	// The API server creates kube-system a moment after it is ready.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := dyn.Resource(namespaces).Get(ctx, "kube-system", metav1.GetOptions{}); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("kube-system never appeared: %v", err)
		}
	}
	const shop = "shop"
	createIn(t, dyn, "", namespaces, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+shop+"\n")
	for _, ns := range []string{shop, "kube-system"} {
		createIn(t, dyn, ns, configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: envoy\n")
		createIn(t, dyn, ns, deployments, deployment("web", ""))
	}
	createIn(t, dyn, "kube-system", deployments, deployment("coredns", ""))
	r := run(t, runOpts{kubeconfig: own.AdminKubeconfig}, "deploy", "--all", "-A")
	expectCode(t, r, 0)
	expectStderr(t, r, "kube-system: deployment.apps/coredns skipped: system_namespace",
		"kube-system: deployment.apps/web skipped: system_namespace", shop+": deployment.apps/web injected")
	if r.requests[http.MethodPatch] != 1 || r.writes() != 1 {
		t.Errorf("requests %v: want exactly one PATCH (shop's web)", r.requests)
	}
	for _, name := range []string{"coredns", "web"} {
		got, err := dyn.Resource(deployments).Namespace("kube-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if hasContainer(t, got, "envoy", "spec", "template", "spec") {
			t.Errorf("kube-system's %s was injected", name)
		}
	}
}
