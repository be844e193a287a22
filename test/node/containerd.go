package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// containerdNamespace is the containerd namespace CRI keeps Kubernetes'
// images and containers in.
const containerdNamespace = "k8s.io"

// containerdConfig is a second containerd's configuration (version 2):
// its own root, state and sockets, CRI with the bridge network, cgroupfs
// (the kubelet's driver here) and the local pause image. Docker's
// containerd is never touched.
const containerdConfig = `version = 2
root = "{{DIR}}/root"
state = "{{DIR}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{{DIR}}/containerd.sock"

[ttrpc]
  address = "{{DIR}}/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{{DIR}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{PAUSE}}"
  # Without CAP_SYS_RESOURCE (a sandbox of a sandbox) runc cannot lower
  # oom_score_adj, and every Pod sandbox fails to start.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{{DIR}}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{{DIR}}/net.d"
`

// containerd is the node's container runtime.
type containerd struct {
	dir, socket, log string
	proc             *cluster.Process
}

// startContainerd writes the configuration under dir, starts containerd
// and waits until it answers on its socket.
func startContainerd(ctx context.Context, dir, logPath string) (*containerd, error) {
	bin, err := cluster.FindBinary("CONTAINERD", "containerd")
	if err != nil {
		return nil, err
	}
	c := &containerd{dir: dir, socket: filepath.Join(dir, "containerd.sock"), log: logPath}
	if err := writeCNIConfig(filepath.Join(dir, "net.d"), filepath.Join(dir, "ipam")); err != nil {
		return nil, err
	}
	config := strings.NewReplacer("{{DIR}}", dir, "{{PAUSE}}", PauseImage).Replace(containerdConfig)
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("write containerd config: %w", err)
	}
	if c.proc, err = cluster.StartProcess(bin, []string{"--config", configPath}, logPath); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := c.ctr(ctx, "version"); err == nil {
			return c, nil
		}
		select {
		case <-c.proc.Exited():
			return nil, fmt.Errorf("containerd exited at start:\n%s", cluster.Tail(logPath, 30))
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for containerd: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("containerd not answering on %s after a minute:\n%s", c.socket, cluster.Tail(logPath, 30))
		}
	}
}

// ctr runs ctr against this containerd in CRI's namespace.
func (c *containerd) ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.socket, "--namespace", containerdNamespace}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// killTasks kills every task (container process) containerd still runs,
// and deletes them with their containers.
func (c *containerd) killTasks(ctx context.Context) {
	out, err := c.ctr(ctx, "tasks", "ls", "--quiet")
	if err != nil {
		return
	}
	for _, id := range strings.Fields(out) {
		_, _ = c.ctr(ctx, "tasks", "kill", "--signal", "SIGKILL", id)
	}
	for _, id := range strings.Fields(out) {
		_, _ = c.ctr(ctx, "tasks", "delete", "--force", id)
	}
}

// stop stops containerd.
func (c *containerd) stop() {
	if c != nil {
		c.proc.Stop()
	}
}

func containsArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

func killPid(pid string) {
	var n int
	if _, err := fmt.Sscan(pid, &n); err == nil && n > 1 {
		_ = syscall.Kill(n, syscall.SIGKILL)
	}
}

// cadvisorSocket is where the kubelet's cAdvisor looks for containerd
// (cAdvisor's default; the kubelet has no flag for it since v1.37). A
// container's series on /metrics/cadvisor carry its container, pod and
// namespace labels only when cAdvisor reaches the runtime there, as
// Prometheus' queries (and kubectl inject size) expect.
const cadvisorSocket = "/run/containerd/containerd.sock"

// linkCadvisorSocket points cadvisorSocket at the node's containerd
// socket, when nothing is there: a host containerd that listens there is
// left alone (cAdvisor then finds none of the node's containers, and its
// series carry no Pod labels). Stop removes the link (unlinkCadvisorSocket).
func linkCadvisorSocket(socket string) error {
	if _, err := os.Lstat(cadvisorSocket); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(cadvisorSocket), 0o711); err != nil {
		return fmt.Errorf("link cAdvisor's containerd socket: %w", err)
	}
	if err := os.Symlink(socket, cadvisorSocket); err != nil {
		return fmt.Errorf("link cAdvisor's containerd socket: %w", err)
	}
	return nil
}

// unlinkCadvisorSocket removes cadvisorSocket when it is a link into
// dir, a node's directory (this run's, or a killed run's).
func unlinkCadvisorSocket(dir string) error {
	target, err := os.Readlink(cadvisorSocket)
	if err != nil || dir == "" || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
		return nil
	}
	if err := os.Remove(cadvisorSocket); err != nil {
		return fmt.Errorf("remove cAdvisor's containerd socket link: %w", err)
	}
	return nil
}
