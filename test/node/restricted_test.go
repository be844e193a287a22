package node_test

import (
	"testing"
)

// restrictedPodSpec makes the app's Pod pass Pod Security "restricted"
// on its own: whatever is refused or changed is the sidecar's doing.
const restrictedPodSpec = `      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
`

// TestRestricted injects a Deployment each way into a namespace that
// enforces Pod Security "restricted": the Pod is admitted and runs, and
// the proxy, asked from inside its container (its stats listener
// reports what its process may do), runs as uid 101 with no
// capabilities, no_new_privs, a seccomp filter and a read-only root.
func TestRestricted(t *testing.T) {
	n.Require(t)
	labels := map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
	eachWay(t, labels, func(t *testing.T, w way, ns string) {
		manifest := webDeploymentRestricted()
		mustSucceed(t, w.deploy(t, ns, manifest), "inject")
		kubectl(t, "", "rollout", "status", "-n", ns, "deploy/web", "--timeout=2m")
		pod := readyPod(t, ns, "app=web")
		stats, err := get("http://" + pod.Status.PodIP + ":9902/stats/prometheus")
		if err != nil {
			t.Fatalf("the proxy's stats: %v", err)
		}
		got := metrics(stats)
		for name, want := range map[string]string{
			"standin_uid": "101", "standin_gid": "101",
			"standin_cap_effective": "0", "standin_cap_bounding": "0",
			"standin_no_new_privs": "1", "standin_seccomp_mode": "2",
			"standin_root_writable": "0",
		} {
			if got[name] != want {
				t.Errorf("the proxy's %s is %q, want %s", name, got[name], want)
			}
		}
	})
}

// webDeploymentRestricted is webDeployment with the securityContexts
// Pod Security "restricted" asks of the app.
func webDeploymentRestricted() string {
	return webDeployment(restrictedPodSpec) + `        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
`
}
