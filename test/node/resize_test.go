package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	injectcore "github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/test/node"
)

// biggerSidecar is the default template with the sidecar's requests
// raised (cpu 100m to 150m, memory 64Mi to 96Mi) in its resources and its
// parameters' defaults, the limits as they are: the Pod stays Burstable.
func biggerSidecar(t *testing.T) string {
	t.Helper()
	text := injectcore.DefaultTemplateYAML()
	for _, r := range [][2]string{
		{"    requests:\n      cpu: 100m\n      memory: 64Mi\n", "    requests:\n      cpu: 150m\n      memory: 96Mi\n"},
		{"resources.requests.cpu\n  type: quantity\n  default: 100m", "resources.requests.cpu\n  type: quantity\n  default: 150m"},
		{"resources.requests.memory\n  type: quantity\n  default: 64Mi", "resources.requests.memory\n  type: quantity\n  default: 96Mi"},
	} {
		if !strings.Contains(text, r[0]) {
			t.Fatalf("the default template does not hold\n%s", r[0])
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestResizeInPlace gives the sidecar of a running Pod injected at
// admission bigger requests: kubectl inject restart -A resizes it in
// place (the Pod's resize subresource), the kubelet applies the new
// requests to the running container, and the Pod keeps its UID, its app
// container its ID and no restart; status -A --check passes.
func TestResizeInPlace(t *testing.T) {
	n.Require(t)
	noTestNamespaces(t)
	ns := namespace(t, nil)
	enableAdmission(t, ns, "")
	kubectl(t, webDeployment(""), "apply", "-n", ns, "-f", "-")
	kubectl(t, "", "rollout", "status", "-n", ns, "deploy/web", "--timeout=2m")
	before := readyPod(t, ns, "app=web")
	app := containerStatus(t, before, "app")

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImage, "--template", biggerSidecar(t)), "install bigger requests")
	t.Cleanup(func() { inject(t, "policy", "--apply", "--image", node.ProxyImage) })
	plan := inject(t, "restart", "-A", "--dry-run")
	if !strings.Contains(plan.stdout+plan.stderr, "image and resources (resized within their QoS class)") {
		t.Errorf("the plan does not resize in place:\n%s%s", plan.stdout, plan.stderr)
	}
	mustSucceed(t, inject(t, "restart", "-A"), "restart")
	if r := inject(t, "status", "-A", "--check"); r.code != 0 {
		t.Errorf("status -A --check after the resize: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	after := readyPod(t, ns, "app=web")
	if after.UID != before.UID {
		t.Errorf("the Pod was created again: %s, was %s", after.Name, before.Name)
	}
	if got := containerStatus(t, after, "app"); got.ContainerID != app.ContainerID || got.RestartCount != 0 {
		t.Errorf("the app container was restarted: %s, %d restarts; was %s", got.ContainerID, got.RestartCount, app.ContainerID)
	}
	proxy := containerStatus(t, after, "envoy")
	if proxy.Resources == nil {
		t.Fatalf("the kubelet reports no resources of the sidecar: %+v", proxy)
	}
	cpu, memory := proxy.Resources.Requests[corev1.ResourceCPU], proxy.Resources.Requests[corev1.ResourceMemory]
	if cpu.String() != "150m" || memory.String() != "96Mi" {
		t.Errorf("the kubelet runs the sidecar with requests cpu %s, memory %s; want 150m and 96Mi", cpu.String(), memory.String())
	}
	if c, _ := sidecar(after); c.Resources.Requests.Cpu().String() != "150m" {
		t.Errorf("the Pod's spec asks cpu %s for the sidecar, want 150m", c.Resources.Requests.Cpu())
	}
}
