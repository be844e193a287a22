package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestExplainLocal: explain --local over one Pod per reason, the lines
// written out here (an -update could not rewrite them), the exit code,
// and the reason codes of -o json.
func TestExplainLocal(t *testing.T) {
	const file = "testdata/explain/pods.yaml"
	policy := "  policy:   kinject-envoy (compiled from the template flags, template fad07bfe23f9a73ecea9)"
	out, errOut, code := runCmd(t, "", "explain", "--local", "-f", file, "--namespace-labels", "sidecar.kinject.dev/inject=enabled")
	want := []string{
		"pod/plain in namespace shop, the default profile:", policy,
		"  verdict:  injected: kinject-envoy adds the sidecar (template fad07bfe23f9a73ecea9)",
		"",
		"pod/optout in namespace shop, the default profile:", policy,
		`  verdict:  not injected: opted out: the annotation sidecar.kinject.dev/inject is "false"`,
		"  to change: remove the annotation sidecar.kinject.dev/inject from the Pod (its workload's pod template)",
		"",
		"pod/hostnet in namespace shop, the default profile:", policy,
		"  verdict:  not injected: the Pod uses the host's network: a sidecar would share the node's ports",
		"  to change: kubectl inject policy --apply --inject-host-network (for every such Pod)",
		"",
		"pod/istio in namespace shop, the default profile:", policy,
		"  verdict:  not injected: the Pod already has another mesh's proxy (istio-proxy or linkerd-proxy)",
		"  to change: remove the other mesh's injection first",
		"",
		"pod/port in namespace shop, the default profile:", policy,
		`  verdict:  not injected: conflict: spec.containers: sidecar "envoy" port 10000 is already used by container "app"`,
		"  to change: change the Pod (or the template) so that they do not clash",
		"",
		"pod/badvalue in namespace shop, the default profile:", policy,
		`  verdict:  not injected: a value the core refuses: metadata.annotations["sidecar.kinject.dev/cpu-request"]: "lots" is not a resource quantity such as 250m, 0.5 or 1Gi (it sets containers[envoy].resources.requests.cpu)`,
		"  to change: fix the annotation the message names",
		"",
		"deployment/web in namespace kube-system, the default profile:", policy,
		"  verdict:  not injected: kube-system is a system namespace: the policy never injects there unless --namespaces names it",
		"  to change: apply the policy with --namespaces kube-system (its Pods run the cluster)",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("explain:\n--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code != 1 || errOut != "" {
		t.Errorf("exit %d (want 1: not every Pod is injected), stderr %q", code, errOut)
	}

	// Without the namespace's label, nothing is injected in shop.
	out, _, code = runCmd(t, "", "explain", "--local", "-f", file, "-o", "json")
	var list struct {
		Items []Verdict `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	var reasons []string
	for _, v := range list.Items {
		reasons = append(reasons, v.Object+"="+string(v.Reason))
	}
	if got, want := strings.Join(reasons, " "), "pod/plain=namespace_not_enabled pod/optout=namespace_not_enabled pod/hostnet=namespace_not_enabled pod/istio=namespace_not_enabled pod/port=namespace_not_enabled pod/badvalue=namespace_not_enabled deployment/web=system_namespace"; got != want || code != 1 {
		t.Errorf("-o json, no label: exit %d, reasons\n%s\nwant\n%s", code, got, want)
	}

	// One Pod the policy injects: exit 0.
	_, _, code = runCmd(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  containers: [{name: app, image: nginx}]\n",
		"explain", "--local", "-f", "-", "--namespace-labels", "sidecar.kinject.dev/inject=enabled")
	if code != 0 {
		t.Errorf("a Pod the policy injects: exit %d, want 0", code)
	}
	// A profile's policy reads the profile's label and annotations.
	out, _, _ = runCmd(t, "", "explain", "--local", "-f", file, "--profile", "mesh", "--namespace-labels", "sidecar.kinject.dev/inject=enabled")
	if !strings.Contains(out, "pod/plain in namespace shop, profile \"mesh\":\n  policy:   kinject-envoy-mesh") ||
		!strings.Contains(out, "lacks the label mesh.sidecar.kinject.dev/inject=enabled\n  to change: kubectl inject enable shop --profile mesh") {
		t.Errorf("--profile mesh:\n%s", out)
	}
	// -n names the namespace of objects that have none, --local too.
	out, _, _ = runCmd(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: app, image: nginx}]\n",
		"explain", "--local", "-f", "-", "-n", "kube-system")
	if !strings.HasPrefix(out, "pod/p in namespace kube-system, the default profile:\n") || !strings.Contains(out, "kube-system is a system namespace") {
		t.Errorf("-n with --local:\n%s", out)
	}
	// Bad flags are errors (exit 2).
	for _, args := range [][]string{
		{"explain"}, {"explain", "pod/x", "-f", file}, {"explain", "--local", "pod/x"}, {"explain", "-f", file, "--namespace-labels", "a=b"}, {"explain", "x"},
		{"explain", "--local", "-f", file, "--template-configmap", "cm"},
	} {
		if _, errOut, code := runCmd(t, "", args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

// TestSkipWordsFromTable: a reason explain has no words of its own for is
// worded from the core's table of reasons, so a new skip reason is
// explained without a change here.
func TestSkipWordsFromTable(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := inject.ReasonRuleOf(inject.ReasonNotInjected)
	if message, _ := skipWords(string(inject.ReasonNotInjected), "", in); message != "left alone (not_injected): "+rule.When {
		t.Errorf("got %q", message)
	}
}

// TestSkipWords: explain's words for each code that has its own, for the
// default profile and a named one, written out.
func TestSkipWords(t *testing.T) {
	t.Parallel()
	const why = "spec.containers: the core's message"
	cases := []struct {
		code          inject.Reason
		profile       string
		message, hint string
	}{
		{inject.ReasonOptedOut, "", `opted out: the annotation sidecar.kinject.dev/inject is "false"`, "remove the annotation sidecar.kinject.dev/inject from the Pod (its workload's pod template)"},
		{inject.ReasonOptedOut, "mesh", `opted out: the annotation mesh.sidecar.kinject.dev/inject is "false"`, "remove the annotation mesh.sidecar.kinject.dev/inject from the Pod (its workload's pod template)"},
		{inject.ReasonNotOptedIn, "mesh", `not opted in: the policy's mode is opt-in and the annotation mesh.sidecar.kinject.dev/inject is not "true"`, `annotate the Pod's template mesh.sidecar.kinject.dev/inject: "true"`},
		{inject.ReasonHostNetwork, "", "the Pod uses the host's network: a sidecar would share the node's ports", "kubectl inject policy --apply --inject-host-network (for every such Pod)"},
		{inject.ReasonHostNetwork, "mesh", "the Pod uses the host's network: a sidecar would share the node's ports", "kubectl inject policy --apply --inject-host-network --profile mesh (for every such Pod)"},
		{inject.ReasonOtherMesh, "", "the Pod already has another mesh's proxy (istio-proxy or linkerd-proxy)", "remove the other mesh's injection first"},
		{inject.ReasonRunsToCompletion, "mesh", "a classic sidecar would keep a Pod that runs to completion running: " + why, "kubectl inject policy --apply --native --profile mesh (a native sidecar stops once the app has exited)"},
		{inject.ReasonConflict, "", "conflict: " + why, "change the Pod (or the template) so that they do not clash"},
		{inject.ReasonInvalidObject, "", "a value the core refuses: " + why, "fix the annotation the message names"},
		{inject.ReasonInvalidStatus, "", "a record it cannot read: " + why, "remove or repair the annotation the message names"},
		{inject.ReasonMirrorPod, "", "left alone (mirror_pod): the pod is the mirror of a static pod (annotated kubernetes.io/config.mirror): the kubelet runs the static pod's manifest, not this object", ""},
		{rollout.ReasonPaused, "", "left alone (paused): " + mustRow(t, rollout.ReasonPaused).When, ""},
		{"no_such_code", "", "left alone (no_such_code)", ""},
	}
	for _, c := range cases {
		in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Profile: c.profile})
		if err != nil {
			t.Fatal(err)
		}
		message, hint := skipWords(string(c.code), why, in)
		if message != c.message || hint != c.hint {
			t.Errorf("%s, profile %q:\n got %q, %q\nwant %q, %q", c.code, c.profile, message, hint, c.message, c.hint)
		}
	}
}

func mustRow(t *testing.T, code inject.Reason) reason.Row {
	t.Helper()
	row, ok := reasonRowOf(code)
	if !ok {
		t.Fatalf("%s: no row", code)
	}
	return row
}

// TestExplainInjectedExitsZero: when every object named would be
// injected (a workload's template, whose sidecar has no state yet),
// explain exits 0.
func TestExplainInjectedExitsZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(path, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd(t, "", "explain", "--local", "-f", path, "--namespace-labels", "sidecar.kinject.dev/inject=enabled")
	if code != 0 || errOut != "" || !strings.Contains(out, "  verdict:  injected: kinject-envoy adds the sidecar") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 0 and an injected verdict", code, errOut, out)
	}
}

// TestVerdictOK: a verdict needs nothing done when the Pod is (or would
// be) injected and, for a Pod that runs, its sidecar is current.
func TestVerdictOK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    Verdict
		want bool
	}{
		{Verdict{Injected: true}, true},
		{Verdict{Injected: true, Sidecar: fleet.Current}, true},
		{Verdict{Injected: true, Sidecar: fleet.Outdated}, false},
		{Verdict{Sidecar: fleet.Current}, false},
	} {
		if got := tc.v.ok(); got != tc.want {
			t.Errorf("%+v: ok %v, want %v", tc.v, got, tc.want)
		}
	}
}
