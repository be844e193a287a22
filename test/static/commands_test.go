package static

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaticCommands: check, status and explain read the static policy
// with --static (the API lists no static object), say that the API
// server runs those files, and check reports a profile installed both
// ways; restart refuses a directory the API server does not run.
func TestStaticCommands(t *testing.T) {
	setup(t)
	ctx := context.Background()
	mutating := filepath.Join(staticDir, "mutating")
	out, _, _ := kubectlInject(t, "check", "--static", staticDir)
	if !contains(out, "[ok]", "kinject-envoy.static.k8s.io (static, "+staticDir+") is current (template ", "the API server runs them: sha256:") {
		t.Errorf("check --static: no line saying the static policy is current and run:\n%s", out)
	}
	out, _, _ = kubectlInject(t, "check")
	if !contains(out, "[warn]", "the API server runs static mutating admission policies (sha256:", "give --static DIR") {
		t.Errorf("check without --static: no warning about the static policy it cannot read:\n%s", out)
	}

	if _, _, code := kubectlInject(t, "status", "-n", staticNS, "--static", staticDir); code != 0 {
		t.Fatalf("status --static: exit %d", code)
	}
	_, stderr, _ := kubectlInject(t, "status", "-n", staticNS, "--static", staticDir)
	if !contains(stderr, "current: template ", "(static manifest "+filepath.Join(mutating, "kinject-envoy.policy.yaml")+"; the API server runs them: sha256:") {
		t.Errorf("status --static: the current line does not name the static manifest:\n%s", stderr)
	}

	if _, err := createPod(ctx, t, staticNS, simplePod("explained")); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := kubectlInject(t, "explain", "pod/explained", "-n", staticNS, "--static", staticDir, "-o", "json")
	var list struct {
		Items []struct {
			Policy    string `json:"policy"`
			Installed bool   `json:"installed"`
			Injected  bool   `json:"injected"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 {
		t.Fatalf("explain --static: exit %d, %v: %s%s", code, err, out, stderr)
	}
	if len(list.Items) != 1 || list.Items[0].Policy != "kinject-envoy.static.k8s.io" || !list.Items[0].Installed || !list.Items[0].Injected {
		t.Errorf("explain --static: %+v; want the static policy, installed, injecting", list.Items)
	}

	// restart rolls nothing to files the API server does not run. (The
	// comparison policy goes first: it injects the same template, under
	// another name, and the next setup installs it again.)
	if _, stderr, code := kubectlInject(t, "policy", "--delete", "--name", apiName); code != 0 {
		t.Fatal(stderr)
	}
	other := t.TempDir()
	if _, stderr, code := kubectlInject(t, "policy", "--static", other, "--image", "envoyproxy/envoy:v1.98.0"); code != 0 {
		t.Fatal(stderr)
	}
	_, stderr, code = kubectlInject(t, "restart", "-n", staticNS, "--static", other, "--dry-run")
	if code == 0 || !contains(stderr, "the API server runs other static manifests", other) {
		t.Errorf("restart --static with a directory the API server does not run: exit %d: %s", code, stderr)
	}

	// Installed both ways: the same template, then another.
	t.Cleanup(func() { kubectlInject(t, "policy", "--delete") })
	if _, stderr, code := kubectlInject(t, "policy", "--apply"); code != 0 {
		t.Fatal(stderr)
	}
	out, _, _ = kubectlInject(t, "check", "--static", staticDir)
	if !contains(out, "[warn]", "kinject-envoy is installed both through the API and as static manifests; both inject template") {
		t.Errorf("check, installed both ways alike: no warning:\n%s", out)
	}
	if _, stderr, code := kubectlInject(t, "policy", "--apply", "--image", "envoyproxy/envoy:v1.98.0"); code != 0 {
		t.Fatal(stderr)
	}
	out, _, code = kubectlInject(t, "check", "--static", staticDir)
	if code != 1 || !contains(out, "[FAIL]", "kinject-envoy is installed both ways, injecting different templates") {
		t.Errorf("check, installed both ways apart: exit %d, want 1 and a failure:\n%s", code, out)
	}
	if strings.Count(out, "installed both") != 1 {
		t.Errorf("check reports installed both ways %d times", strings.Count(out, "installed both"))
	}
}
