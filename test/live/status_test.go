package live

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// TestStatus builds a namespace with a workload injected with an old
// template, one with the current template whose Pods are half behind, one
// not injected, one opted out, a bare Pod and a Pod injected at admission
// (listed by itself, and counted for its Deployment),
// and checks kubectl inject status: rows, states and counts in table and
// JSON output, the --check exit codes, and list calls only.
func TestStatus(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	old := writeFile(t, "old.yaml", "containers:\n- name: envoy\n  image: envoyproxy/envoy:v1.30.0\n")
	for _, name := range []string{"current", "old", "plain"} {
		create(t, ns, deployments, deployment(name, ""))
	}
	create(t, ns, deployments, strings.Replace(deployment("optout", ""), "    metadata:\n", "    metadata:\n      annotations: {sidecar.kinject.dev/inject: \"false\"}\n", 1))
	expectCode(t, inject(t, "deploy/current", "-n", ns), 0)
	expectCode(t, inject(t, "deploy/old", "-n", ns, "--template", old), 0)

	// Pods as the controllers would make them (no controller runs here):
	// "current" has one Pod from before the injection and one after;
	// "plain" has one Pod injected at admission.
	current := get(t, ns, deployments, "current")
	tpl, _, _ := unstructured.NestedMap(current.Object, "spec", "template")
	rs := ownedBy(t, ns, replicasets, current, "current-1", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "current"}}, "template": tpl})
	podFrom(t, ns, rs, "current-1-new", tpl)
	plainTpl, _, _ := unstructured.NestedMap(get(t, ns, deployments, "plain").Object, "spec", "template")
	podFrom(t, ns, rs, "current-1-old", plainTpl)
	plainRS := ownedBy(t, ns, replicasets, get(t, ns, deployments, "plain"), "plain-1", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "plain"}}, "template": plainTpl})
	podFrom(t, ns, plainRS, "plain-1-admitted", tpl)
	create(t, ns, pods, "apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\nspec:\n  containers: [{name: app, image: nginx}]\n")

	r := inject(t, "status", "-n", ns, "-o", "json")
	expectCode(t, r, 0)
	// One list per kind of workload and Pods, the installed policies, and,
	// none being installed, the API server's /metrics, which says whether
	// it runs static ones (the API does not list them).
	wantSent := []string{"/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", "/metrics"}
	for _, r := range []string{"apis/apps/v1/namespaces/%s/deployments", "apis/apps/v1/namespaces/%s/statefulsets", "apis/apps/v1/namespaces/%s/daemonsets",
		"apis/apps/v1/namespaces/%s/replicasets", "apis/batch/v1/namespaces/%s/cronjobs", "apis/batch/v1/namespaces/%s/jobs", "api/v1/namespaces/%s/pods"} {
		wantSent = append(wantSent, "/"+fmt.Sprintf(r, ns))
	}
	var sent []string
	for _, s := range r.sent {
		method, uri, _ := strings.Cut(s, " ")
		path, _, _ := strings.Cut(uri, "?")
		if method != http.MethodGet {
			path = s
		}
		sent = append(sent, path)
	}
	sort.Strings(wantSent)
	sort.Strings(sent)
	if strings.Join(sent, "\n") != strings.Join(wantSent, "\n") {
		t.Errorf("status sent %v:\n%s\nwant a GET of each of\n%s", r.requests, strings.Join(r.sent, "\n"), strings.Join(wantSent, "\n"))
	}
	var list struct {
		Kind  string      `json:"kind"`
		Items []fleet.Row `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.stdout)
	}
	var got []string
	for _, row := range list.Items {
		got = append(got, fmt.Sprintf("%s %s pods=%d behind=%d admission=%v bare=%v", row.Ref(), row.State, row.Pods, row.PodsBehind, row.Admission, row.Bare))
	}
	want := []string{
		"deployment.apps/old outdated pods=0 behind=0 admission=false bare=false",
		"deployment.apps/current current pods=2 behind=1 admission=false bare=false",
		"deployment.apps/plain not-injected pods=1 behind=0 admission=false bare=false",
		"pod/bare not-injected pods=0 behind=0 admission=false bare=true",
		"deployment.apps/optout skipped:opted_out pods=0 behind=0 admission=false bare=false",
		"pod/plain-1-admitted current pods=0 behind=0 admission=true bare=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, row := range list.Items {
		if row.Name == "old" && (len(row.Images) != 1 || row.Images[0] != "envoy=envoyproxy/envoy:v1.30.0" || row.RecordedTemplate == row.CurrentTemplate) {
			t.Errorf("outdated row: %+v", row)
		}
		if row.Name == "current" && row.Restart != "kubectl rollout restart deployment.apps/current -n "+ns {
			t.Errorf("restart command: %q", row.Restart)
		}
	}

	table := inject(t, "status", "-n", ns)
	expectCode(t, table, 0)
	expectTable(t, table.stdout,
		"NAME STATE SIDECAR PODS BEHIND",
		"deployment.apps/old outdated envoyproxy/envoy:v1.30.0 0 0",
		"deployment.apps/current current envoyproxy/envoy:v1.40.0 2 1",
		"deployment.apps/plain not-injected <none> 1 0",
		"pod/bare not-injected <none> - 0",
		"deployment.apps/optout skipped:opted_out <none> 0 0",
		"pod/plain-1-admitted current envoyproxy/envoy:v1.40.0 admission 0")
	expectStderr(t, table, "deployment.apps/current: 1 of 2 Pods run an older sidecar than the template; restart: kubectl rollout restart deployment.apps/current -n "+ns)

	// -l selects rows by the objects' own labels, as kubectl get -l does:
	// the Pods still count for their workload, and the others are not
	// shown (not reported as skipped).
	labelled := inject(t, "status", "-n", ns, "-l", "app in (old,current)")
	expectCode(t, labelled, 0)
	expectTable(t, labelled.stdout,
		"NAME STATE SIDECAR PODS BEHIND",
		"deployment.apps/old outdated envoyproxy/envoy:v1.30.0 0 0",
		"deployment.apps/current current envoyproxy/envoy:v1.40.0 2 1",
		"pod/plain-1-admitted current envoyproxy/envoy:v1.40.0 admission 0")
	expectCode(t, inject(t, "status", "-n", ns, "-l", "app=plain", "--check"), 0)
	expectCode(t, inject(t, "status", "-n", ns, "-l", "app=old", "--check"), 1)

	expectCode(t, inject(t, "status", "-n", ns, "--check"), 1)
	expectCode(t, inject(t, "status", "-n", ns, "deploy/plain", "deploy/optout", "--check"), 0)
	expectCode(t, inject(t, "status", "-n", ns, "deploy/old", "--check", "--template", old), 0)
	y := inject(t, "status", "-n", ns, "deploy/optout", "-o", "yaml")
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(y.stdout), &doc); err != nil || !strings.Contains(y.stdout, "state: skipped:opted_out") {
		t.Errorf("-o yaml: %v\n%s", err, y.stdout)
	}
}

// TestStatusCheckErrors: status --check (the built binary) exits 1 when
// a row is error:<reason>, as it does for outdated rows and Pods behind,
// and says how many rows are in error; without that row it exits 0.
func TestStatusCheckErrors(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("ok", ""))
	create(t, ns, deployments, strings.Replace(deployment("clash", ""), "      - name: app\n", "      - name: envoy\n", 1))
	expectCode(t, inject(t, "deploy/ok", "-n", ns), 0)

	stderr, code := runPlugin(t, "status", "-n", ns, "--check")
	if code != 1 || !strings.Contains(stderr, "check: 0 outdated, 0 with Pods behind their template, 1 in error") {
		t.Errorf("status --check with a conflict row: exit %d, want 1 naming the error row", code)
	}
	rows := inject(t, "status", "-n", ns)
	expectTable(t, rows.stdout,
		"NAME STATE SIDECAR PODS BEHIND",
		"deployment.apps/clash error:conflict <none> 0 0",
		"deployment.apps/ok current envoyproxy/envoy:v1.40.0 0 0")
	if _, code := runPlugin(t, "status", "-n", ns, "deploy/ok", "--check"); code != 0 {
		t.Errorf("status --check without the conflict row: exit %d, want 0", code)
	}
}

// ownedBy creates an object of gvr named name with spec, controlled by owner.
func ownedBy(t *testing.T, ns string, gvr schema.GroupVersionResource, owner *unstructured.Unstructured, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": name, "ownerReferences": []any{controllerRef(owner)}},
		"spec":     spec,
	}
	data, _ := yaml.Marshal(obj)
	return create(t, ns, gvr, string(data))
}

// podFrom creates a Pod from a pod template, controlled by owner.
func podFrom(t *testing.T, ns string, owner *unstructured.Unstructured, name string, tpl map[string]any) {
	t.Helper()
	meta, _ := tpl["metadata"].(map[string]any)
	m := map[string]any{"name": name, "ownerReferences": []any{controllerRef(owner)}}
	for _, f := range []string{"labels", "annotations"} {
		if v, ok := meta[f]; ok {
			m[f] = v
		}
	}
	data, _ := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": tpl["spec"]})
	create(t, ns, pods, string(data))
}

func controllerRef(owner *unstructured.Unstructured) map[string]any {
	return map[string]any{"apiVersion": owner.GetAPIVersion(), "kind": owner.GetKind(), "name": owner.GetName(), "uid": string(owner.GetUID()), "controller": true}
}

// expectTable checks a table's lines, cell by cell (any run of spaces
// between cells).
func expectTable(t *testing.T, got string, want ...string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant (cells):\n%s", got, strings.Join(want, "\n"))
	}
}

// TestStatusForbidden runs status as a user who may list Deployments and
// nothing else: the Deployments are shown, every kind it may not list is
// named with the RBAC it needs, the exit code is 1, and nothing is written.
func TestStatusForbidden(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ""))
	if err := c.GrantViewer(ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	r := run(t, runOpts{kubeconfig: c.ViewerKubeconfig}, "status", "-n", ns)
	expectCode(t, r, 1)
	if r.writes() != 0 {
		t.Errorf("status wrote: %v", r.requests)
	}
	expectTable(t, r.stdout,
		"NAME STATE SIDECAR PODS BEHIND",
		"deployment.apps/web not-injected <none> 0 0")
	for _, kind := range []string{"statefulsets.apps", "daemonsets.apps", "replicasets.apps", "cronjobs.batch", "jobs.batch", "pods"} {
		expectStderr(t, r, "needs only get and list on "+kind+" (RBAC)")
	}
}
