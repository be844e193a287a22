package admission

import (
	"context"
	"encoding/json"
	"github.com/kinject/kubectl-inject/plugin/local"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// kubectlInjectAs runs kubectl-inject in-process with a kubeconfig.
func kubectlInjectAs(t testing.TB, kubeconfig string, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	command := cmd.NewCmdInject(streams, local.FrontEnd{})
	command.SetArgs(append(args, "--kubeconfig", kubeconfig))
	code := cmd.Execute(command, streams)
	return out.String(), errOut.String(), code
}

// expectLines compares output with want line by line; "URL" in want stands
// for the API server's address.
func expectLines(t testing.TB, what, got string, url string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	for i := range want {
		want[i] = strings.ReplaceAll(want[i], "URL", url)
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n--- got\n%s\n--- want\n%s", what, strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// The checks that pass for admin on the test API server.
var checkServed = []string{
	"cluster",
	"  [ok]   the API server at URL answers: Kubernetes v1.37.2",
	"  [ok]   MutatingAdmissionPolicy admissionregistration.k8s.io/v1 is served",
	"permissions",
	"  [ok]   policy --apply: allowed",
	"  [ok]   enable / disable: allowed",
	"  [ok]   live injection: allowed",
	"  [ok]   status: allowed",
}

// TestCheck runs kubectl inject check on a profile of its own (so other
// tests' policies and namespaces do not show): nothing installed, a
// healthy install, a policy older than the template, a namespace that
// lacks the sidecar's ConfigMap, a user without the RBAC, and a server
// nobody answers at.
func TestCheck(t *testing.T) {
	c.Require(t)
	const profile, ns = "chk", "check-shop"
	plainNamespace(t, ns)
	// The seed's sidecar, which needs the ConfigMap envoy (the embedded
	// default needs nothing).
	seed := seedTemplateFile(t)
	check := func(args ...string) (string, int) {
		out, errOut, code := kubectlInject(t, append([]string{"check", "--profile", profile, "--template", seed}, args...)...)
		t.Logf("kubectl inject check %v: exit %d\n%s%s", args, code, out, errOut)
		return out, code
	}

	out, code := check()
	expectLines(t, "nothing installed", out, c.URL, append(append([]string{}, checkServed...),
		"policy",
		"  [warn] kinject-envoy-chk (profile chk) is not installed",
		"         hint: kubectl inject policy --apply --profile chk --template "+seed+" (with the flags given here; --diff first shows the change)",
		"namespaces",
		"  [warn] no namespace is enabled: the policy injects no Pod",
		"         hint: kubectl inject enable NAMESPACE --profile chk",
	)...)
	if code != 0 {
		t.Errorf("nothing installed: exit %d, want 0 (warnings only)", code)
	}

	if _, errOut, code := kubectlInject(t, "policy", "--apply", "--profile", profile, "--template", seed); code != 0 {
		t.Fatalf("policy --apply: %s", errOut)
	}
	t.Cleanup(func() { kubectlInject(t, "policy", "--delete", "--profile", profile, "--template", seed) })
	if _, errOut, code := kubectlInject(t, "enable", ns, "--profile", profile); code != 0 {
		t.Fatalf("enable: %s", errOut)
	}
	hash := templateHash(t, "--profile", profile, "--template", seed)
	out, code = check()
	expectLines(t, "enabled, ConfigMap missing", out, c.URL, append(append([]string{}, checkServed...),
		"policy",
		"  [ok]   kinject-envoy-chk (profile chk) is installed and current (template "+hash+")",
		"namespaces",
		"  [ok]   enabled: "+ns,
		"  [FAIL] "+ns+" lacks configmap/envoy (volumes[envoy-conf].configMap.name) that the sidecar needs: the policy leaves its new Pods as created",
		"         hint: create it in "+ns,
		"workloads",
		"  [ok]   0 workloads and Pods in the enabled namespaces: none behind",
	)...)
	if code != 1 {
		t.Errorf("ConfigMap missing: exit %d, want 1", code)
	}

	envoyConfigMap(t, ns)
	out, code = check()
	healthy := append(append([]string{}, checkServed...),
		"policy",
		"  [ok]   kinject-envoy-chk (profile chk) is installed and current (template "+hash+")",
		"namespaces",
		"  [ok]   enabled: "+ns,
		"  [ok]   "+ns+" has what the sidecar needs",
		"workloads",
		"  [ok]   0 workloads and Pods in the enabled namespaces: none behind",
	)
	expectLines(t, "healthy", out, c.URL, healthy...)
	if code != 0 {
		t.Errorf("healthy: exit %d, want 0", code)
	}
	jsonOut, code := check("-o", "json")
	var doc struct {
		Checks []struct{ Category, Status, Message, Hint string }
		Failed int
	}
	if err := json.Unmarshal([]byte(jsonOut), &doc); err != nil || code != 0 || doc.Failed != 0 || len(doc.Checks) != 10 {
		t.Errorf("-o json: exit %d, %v, %+v", code, err, doc)
	}

	// An upgrade: the policy installed is older than the template.
	newer := []string{"--image", "envoyproxy/envoy:v1.99.0"}
	out, code = check(newer...)
	newHash := templateHash(t, append([]string{"--profile", profile, "--template", seed}, newer...)...)
	want := append([]string{}, healthy...)
	want[9] = "  [FAIL] kinject-envoy-chk injects an older template (" + hash + "; current " + newHash + "): new Pods get the old sidecar"
	want = append(want[:10], append([]string{"         hint: kubectl inject policy --apply --profile chk --template " + seed + " (with the flags given here; --diff first shows the change)"}, want[10:]...)...)
	expectLines(t, "older template", out, c.URL, want...)
	if code != 1 {
		t.Errorf("older template: exit %d, want 1", code)
	}

	// Other settings: the same template, other namespaces.
	out, code = check("--exclude-namespaces", "legacy")
	if !strings.Contains(out, "  [FAIL] kinject-envoy-chk was compiled with other settings or by another version: mutatingadmissionpolicy/kinject-envoy-chk") || code != 1 {
		t.Errorf("other settings: exit %d\n%s", code, out)
	}

	// A user without the RBAC: every command's rights are named, and what
	// cannot be read says so.
	out, _, code = kubectlInjectAs(t, c.ViewerKubeconfig, "check", "--profile", profile, "--template", seed)
	askAdmin := "         hint: ask the cluster's administrator for these rights (kubectl auth can-i --list shows what this user may do)"
	expectLines(t, "a user without the RBAC", out, c.URL, append(append([]string{}, checkServed[:3]...),
		"permissions",
		"  [FAIL] policy --apply: this user may not get, patch mutatingadmissionpolicies, mutatingadmissionpolicybindings, validatingadmissionpolicies, validatingadmissionpolicybindings (admissionregistration.k8s.io)",
		askAdmin,
		"  [FAIL] enable / disable: this user may not get, patch namespaces",
		askAdmin,
		"  [FAIL] live injection: this user may not get, list, patch deployments, statefulsets, daemonsets (apps, in default); get configmaps (in default)",
		askAdmin,
		"  [FAIL] status: this user may not list deployments, statefulsets, daemonsets, replicasets (apps, in default); list cronjobs, jobs (batch, in default); list pods (in default)",
		askAdmin,
		"policy",
		"  [FAIL] cannot read mutatingadmissionpolicy/kinject-envoy-chk: 403 Forbidden",
		"namespaces",
		"  [FAIL] cannot list namespaces: 403 Forbidden",
	)...)
	if code != 1 {
		t.Errorf("viewer: exit %d, want 1", code)
	}

	// Nobody answers: one line, no stack trace.
	streams, _, o, e := genericiooptions.NewTestIOStreams()
	command := cmd.NewCmdInject(streams, local.FrontEnd{})
	command.SetArgs([]string{"check", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify"})
	code = cmd.Execute(command, streams)
	expectLines(t, "unreachable", o.String(), "",
		"cluster",
		"  [FAIL] cannot reach the cluster at https://127.0.0.1:1: connection refused (is it running, and is this the right context?); to inject manifest files without a cluster, use --local -f FILE",
	)
	if code != 1 || !strings.Contains(e.String(), "check: 1 of 1 checks failed") {
		t.Errorf("unreachable: exit %d, stderr %q", code, e.String())
	}
}

// templateHash is the template hash the policy compiled with args carries.
func templateHash(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, code := kubectlInject(t, append([]string{"policy", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("policy -o json: %s", errOut)
	}
	var list struct {
		Items []struct {
			Metadata struct{ Annotations map[string]string }
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) == 0 {
		t.Fatalf("policy -o json: %v", err)
	}
	return list.Items[0].Metadata.Annotations["sidecar.kinject.dev/template"]
}

// TestCheckWithoutMutatingPolicies: an API server that does not serve
// MutatingAdmissionPolicy v1 fails the check with a hint.
func TestCheckWithoutMutatingPolicies(t *testing.T) {
	c.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Its admission plugin goes too: it cannot start without the API.
	own, err := cluster.Start(ctx, "--runtime-config=admissionregistration.k8s.io/v1/mutatingadmissionpolicies=false,admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings=false",
		"--disable-admission-plugins=MutatingAdmissionPolicy")
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	out, _, code := kubectlInjectAs(t, own.AdminKubeconfig, "check")
	want := append(append([]string{}, checkServed[:2]...),
		"  [FAIL] MutatingAdmissionPolicy admissionregistration.k8s.io/v1 is not served (Kubernetes v1.37.2): the admission policy cannot be installed",
		"         hint: it is served from Kubernetes 1.36 on, unless --runtime-config turns it off; until then, inject workloads (kubectl inject deploy --all) or manifests (--local, inject-fn)",
	)
	want = append(want, checkServed[3:]...)
	want = append(want,
		"namespaces",
		"  [warn] no namespace is enabled: the policy injects no Pod",
		"         hint: kubectl inject enable NAMESPACE",
	)
	expectLines(t, "without MutatingAdmissionPolicy", out, own.URL, want...)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// TestCheckUnreservedPort: check warns, with what to do, of a port the
// template's Envoy binds (here its admin API, once reservedPorts is
// removed) that no containerPort declares and reservedPorts does not
// list; a warning does not fail it.
func TestCheckUnreservedPort(t *testing.T) {
	c.Require(t)
	text := inject.DefaultTemplateYAML()
	start, end := strings.Index(text, "reservedPorts:"), strings.Index(text, "# What a workload may set")
	if start < 0 || end < start {
		t.Fatal("the default template has no reservedPorts list before its parameters")
	}
	tpl := writeFile(t, "unreserved.yaml", []byte(text[:start]+text[end:]))
	out, errOut, code := kubectlInject(t, "check", "--profile", "unres", "--template", tpl)
	t.Logf("kubectl inject check: exit %d\n%s%s", code, out, errOut)
	for _, want := range []string{
		"template\n" +
			`  [warn] container "envoy" binds port 9901 (admin), which no containerPort declares and reservedPorts does not list: an app on it would not be refused (add it to reservedPorts)` + "\n" +
			"         hint: list the port under reservedPorts in the template\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check lacks:\n%s", want)
		}
	}
	if code != 0 {
		t.Errorf("exit %d, want 0 (warnings only)", code)
	}
	out, _, _ = kubectlInject(t, "check", "--profile", "unres")
	if strings.Contains(out, "reservedPorts") {
		t.Errorf("the default template is warned of:\n%s", out)
	}
}
