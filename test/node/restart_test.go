package node_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// TestRestart injects a Deployment each way, upgrades the sidecar (the
// installed policy's image: the stand-in under its other tag), and runs
// kubectl inject restart -A --strategy recreate (TestUpgradeFleetInPlace
// upgrades in place): when it returns, kubectl inject status -A
// --check passes at once, and every Pod has been recreated and runs the
// new sidecar, Ready.
func TestRestart(t *testing.T) {
	n.Require(t)
	noTestNamespaces(t)
	// The namespaces are the test's, not its subtests': they outlive
	// the deployment step.
	var nss []string
	for range ways {
		nss = append(nss, namespace(t, nil))
	}
	t.Run("deploy", func(t *testing.T) {
		for i, w := range ways {
			t.Run(w.name, func(t *testing.T) {
				t.Parallel()
				mustSucceed(t, w.deploy(t, nss[i], webDeployment("")), "inject")
				kubectl(t, "", "rollout", "status", "-n", nss[i], "deploy/web", "--timeout=2m")
			})
		}
	})
	if t.Failed() {
		return
	}
	old := map[string]string{}
	for _, ns := range nss {
		pod := readyPod(t, ns, "app=web")
		old[ns] = pod.Name
	}

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageNext), "upgrade the policy")
	t.Cleanup(func() { inject(t, "policy", "--apply", "--image", node.ProxyImage) })
	for i, w := range ways {
		if w.name == "admission" {
			waitPolicyImage(t, nss[i], node.ProxyImageNext)
		}
	}
	begin := time.Now()
	mustSucceed(t, inject(t, "restart", "-A", "--strategy", "recreate"), "restart")
	t.Logf("restart took %s", time.Since(begin).Round(100*time.Millisecond))
	if r := inject(t, "status", "-A", "--check"); r.code != 0 {
		t.Errorf("status -A --check right after restart: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, ns := range nss {
		for _, p := range podsIncludingTerminating(t, ns) {
			if p.Name == old[ns] {
				t.Errorf("%s: the old Pod %s is still there when restart returns (deleting: %t)", ns, p.Name, p.DeletionTimestamp != nil)
			}
		}
		pod := readyPod(t, ns, "app=web")
		if c, _ := sidecar(pod); c.Image != node.ProxyImageNext {
			t.Errorf("%s: Pod %s runs %s, want %s", ns, pod.Name, c.Image, node.ProxyImageNext)
		}
		for _, s := range pod.Status.InitContainerStatuses {
			if s.Name == "envoy" && (s.State.Running == nil || s.Image != node.ProxyImageNext) {
				t.Errorf("%s: the sidecar's status: %+v", ns, s)
			}
		}
	}
}

func podsIncludingTerminating(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	l, err := admin(t).CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}
