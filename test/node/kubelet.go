package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// kubeletConfig is the node's KubeletConfiguration. What each setting is
// for on this machine:
//   - failCgroupV1 false: the machine is cgroup v1, where the kubelet
//     otherwise refuses to start;
//   - cgroupDriver cgroupfs: containerd 1.6 has no RuntimeConfig call to
//     tell the kubelet its driver;
//   - makeIPTablesUtilChains false, readOnlyPort 0: nothing on the host
//     beyond what the node needs;
//   - loose eviction thresholds and image GC at 100%: a full shared disk
//     must not evict the tests' Pods or their images, which cannot be
//     pulled again;
//   - anonymous requests allowed: the API server reaches the kubelet
//     (logs, exec) without a client certificate; the kubelet listens
//     only on the node's bridge.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://{{SOCKET}}
makeIPTablesUtilChains: false
readOnlyPort: 0
address: {{NODE_IP}}
port: {{PORT}}
healthzBindAddress: 127.0.0.1
healthzPort: {{HEALTHZ_PORT}}
podLogsDir: {{DIR}}/pod-logs
registerNode: true
failSwapOn: false
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 50Mi
  nodefs.available: 2%
  nodefs.inodesFree: 2%
  imagefs.available: 2%
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
`

// startKubelet writes the kubelet's configuration under dir and starts
// it against the containerd at socket, registering the cluster's Node.
func startKubelet(ctx context.Context, c *cluster.Cluster, dir, socket, logPath string) (*cluster.Process, error) {
	bin, err := cluster.FindBinary("KUBELET", "kubelet")
	if err != nil {
		return nil, err
	}
	ports, err := cluster.FreePorts(2)
	if err != nil {
		return nil, err
	}
	config := strings.NewReplacer(
		"{{SOCKET}}", socket, "{{NODE_IP}}", NodeIP, "{{DIR}}", dir,
		"{{PORT}}", strconv.Itoa(ports[0]), "{{HEALTHZ_PORT}}", strconv.Itoa(ports[1]),
	).Replace(kubeletConfig)
	configPath := filepath.Join(dir, "config.yaml")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create kubelet dir: %w", err)
	}
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("write kubelet config: %w", err)
	}
	p, err := cluster.StartProcess(bin, []string{
		"--config=" + configPath,
		"--kubeconfig=" + c.NodeKubeconfig,
		"--root-dir=" + filepath.Join(dir, "root"),
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--hostname-override=" + c.NodeName,
		"--node-ip=" + NodeIP,
		"--v=2",
	}, logPath)
	if err != nil {
		return nil, err
	}
	healthz := "http://127.0.0.1:" + strconv.Itoa(ports[1]) + "/healthz"
	if err := cluster.WaitHealthy(ctx, p, healthz, 2*time.Minute); err != nil {
		p.Stop()
		return nil, fmt.Errorf("kubelet not healthy: %w\n%s", err, cluster.Tail(logPath, 40))
	}
	return p, nil
}

// waitNodeReady waits until the kubelet's Node is Ready, then takes off
// the taints the API server gave it at registration
// (TaintNodesByCondition), which only the node lifecycle controller,
// not run here, would remove.
func waitNodeReady(ctx context.Context, admin kubernetes.Interface, name, logPath string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := admin.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for node %s to be Ready: %w\n%s", name, err, cluster.Tail(logPath, 40))
	}
	patch := []byte(`{"spec":{"taints":null}}`)
	if _, err := admin.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("untaint node %s: %w", name, err)
	}
	return nil
}
