package node_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// TestRestartInPlace upgrades the sidecar of a running Pod injected at
// admission in place (the installed policy's image: the stand-in under
// its other tag): kubectl inject restart -A patches the image, the
// kubelet restarts the sidecar alone on it, and the Pod keeps its UID,
// the app container its container ID and a restart count of 0;
// status -A --check passes.
func TestRestartInPlace(t *testing.T) {
	n.Require(t)
	noTestNamespaces(t)
	ns := namespace(t, nil)
	enableAdmission(t, ns, "")
	kubectl(t, webDeployment(""), "apply", "-n", ns, "-f", "-")
	kubectl(t, "", "rollout", "status", "-n", ns, "deploy/web", "--timeout=2m")
	before := readyPod(t, ns, "app=web")
	app := containerStatus(t, before, "app")

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageNext), "upgrade the policy")
	t.Cleanup(func() { inject(t, "policy", "--apply", "--image", node.ProxyImage) })
	waitPolicyImage(t, ns, node.ProxyImageNext)
	begin := time.Now()
	r := inject(t, "restart", "-A")
	mustSucceed(t, r, "restart")
	t.Logf("restart in place took %s", time.Since(begin).Round(100*time.Millisecond))
	if !strings.Contains(r.stderr, "upgrade in place of its 1 Pods behind") {
		t.Errorf("restart did not upgrade in place:\n%s", r.stderr)
	}
	if r := inject(t, "status", "-A", "--check"); r.code != 0 {
		t.Errorf("status -A --check after restart: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	after := readyPod(t, ns, "app=web")
	if after.UID != before.UID {
		t.Errorf("the Pod was created again: %s (%s), was %s (%s)", after.Name, after.UID, before.Name, before.UID)
	}
	if got := containerStatus(t, after, "app"); got.ContainerID != app.ContainerID || got.RestartCount != 0 {
		t.Errorf("the app container was restarted: %s, %d restarts; was %s", got.ContainerID, got.RestartCount, app.ContainerID)
	}
	if c, _ := sidecar(after); c.Image != node.ProxyImageNext {
		t.Errorf("the Pod's sidecar is %s, want %s", c.Image, node.ProxyImageNext)
	}
	proxy := containerStatus(t, after, "envoy")
	if proxy.State.Running == nil || !strings.HasSuffix(proxy.Image, node.ProxyImageNext) {
		t.Errorf("the sidecar's status: %+v", proxy)
	}
}

// containerStatus is the status of the Pod's container name (an init
// container's too).
func containerStatus(t *testing.T, p corev1.Pod, name string) corev1.ContainerStatus {
	t.Helper()
	for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("Pod %s has no status of container %s", p.Name, name)
	return corev1.ContainerStatus{}
}
