package node

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// Name is the Node's name; start its cluster with
// cluster.Options{NodeName: node.Name}.
const Name = "kinject-node"

// ErrUnavailable is wrapped by Start's error when the machine cannot run
// a node: not root, or a program missing.
var ErrUnavailable = errors.New("the real node needs root, Docker, the kubelet of hack/build-apiserver.sh, and Debian's containerd, runc, containernetworking-plugins, iptables and iproute2 (hack/install-tools.sh)")

// Node is a running kubelet and its containerd, registered with a
// cluster. Get one from Start or MustStart.
type Node struct {
	// Name is the Node's name (Name).
	Name string
	// Dir holds containerd's and the kubelet's state; LogDir their logs,
	// kept after Stop when KeepLogs is set (or KINJECT_KEEP_LOGS=1).
	Dir, LogDir               string
	ContainerdLog, KubeletLog string
	KeepLogs                  bool
	// Before is the host as Start found it, which Stop restores.
	Before *Snapshot
	// StartTime is how long Start took, images built and imported.
	StartTime time.Duration

	cluster    *cluster.Cluster
	containerd *containerd
	kubelet    *cluster.Process
	lock       net.Listener
	skip       string
	// missing: skip is for binaries a command of ours installs (a test
	// that needs the node then fails, as testbin.Missing says).
	missing  bool
	stopOnce sync.Once
	stopErr  error
}

// Start takes the machine's node lock, builds the images, undoes what a
// killed run left, records the host, then sets up the bridge, starts
// containerd with the images imported and the kubelet, and returns once
// the Node is Ready. c must have been started with Options.NodeName set
// to Name.
func Start(ctx context.Context, c *cluster.Cluster) (_ *Node, err error) {
	begin := time.Now()
	if err := available(); err != nil {
		return nil, err
	}
	if c.NodeName != Name || c.NodeKubeconfig == "" {
		return nil, fmt.Errorf("start node %s: the cluster was not started with Options.NodeName %q", Name, Name)
	}
	n := &Node{Name: Name, cluster: c}
	if n.lock, err = lock(ctx); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	// Under the lock: another checkout's run tags the same images.
	if err := BuildImages(ctx); err != nil {
		return nil, err
	}
	if err := recoverKilledRun(); err != nil {
		return nil, err
	}
	if n.Before, err = TakeSnapshot(); err != nil {
		return nil, err
	}
	if n.Dir, err = os.MkdirTemp("", "kinject-node-"); err != nil {
		return nil, fmt.Errorf("create node dir: %w", err)
	}
	if n.LogDir, err = os.MkdirTemp("", "kinject-node-logs-"); err != nil {
		return nil, fmt.Errorf("create node log dir: %w", err)
	}
	n.ContainerdLog = filepath.Join(n.LogDir, "containerd.log")
	n.KubeletLog = filepath.Join(n.LogDir, "kubelet.log")
	containerdDir := filepath.Join(n.Dir, "containerd")
	if err := (record{Dir: n.Dir, LogDir: n.LogDir, Socket: filepath.Join(containerdDir, "containerd.sock"), Before: n.Before}).write(); err != nil {
		return nil, err
	}
	if err := setUpNetwork(); err != nil {
		return nil, err
	}
	if n.containerd, err = startContainerd(ctx, containerdDir, n.ContainerdLog); err != nil {
		return nil, err
	}
	if err := n.containerd.importImages(ctx); err != nil {
		return nil, err
	}
	if err := linkCadvisorSocket(n.containerd.socket); err != nil {
		return nil, err
	}
	if n.kubelet, err = startKubelet(ctx, c, filepath.Join(n.Dir, "kubelet"), n.containerd.socket, n.KubeletLog); err != nil {
		return nil, err
	}
	admin, err := c.AdminClient()
	if err != nil {
		return nil, err
	}
	if err := waitNodeReady(ctx, admin, Name, n.KubeletLog); err != nil {
		return nil, err
	}
	n.StartTime = time.Since(begin)
	return n, nil
}

// available checks that the machine can run a node.
func available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root: %w", ErrUnavailable)
	}
	for _, prog := range []string{"containerd", "runc", "ctr", "ip", "iptables", "docker"} {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("%s not on PATH: %w", prog, ErrUnavailable)
		}
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		return fmt.Errorf("no CNI bridge plugin in /usr/lib/cni: %w", ErrUnavailable)
	}
	if err := exec.Command("docker", "version").Run(); err != nil {
		return fmt.Errorf("no Docker daemon: %w", ErrUnavailable)
	}
	if _, err := cluster.FindBinary("KUBELET", "kubelet"); err != nil {
		return fmt.Errorf("no kubelet ($KUBELET, the tool cache, PATH): %w", ErrUnavailable)
	}
	return nil
}

// recoverKilledRun undoes what a run killed before its Stop left.
func recoverKilledRun() error {
	r, err := readRecord()
	if err != nil || r == nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "node: undoing what a killed run left in %s\n", r.Dir)
	if err := restore(r.Before, r.Dir, r.Socket); err != nil {
		return fmt.Errorf("undo a killed run's node: %w", err)
	}
	if r.LogDir != "" {
		_ = os.RemoveAll(r.LogDir)
	}
	return os.Remove(recordPath)
}

// Stop deletes the Pods while the kubelet runs (their networks and
// volumes torn down the ordinary way), stops the kubelet and containerd,
// and restores the host as Start found it. It is safe to call more than
// once, on nil, and from a signal handler; it returns what could not be
// restored. The machine's node lock stays held until Release.
func (n *Node) Stop() error {
	if n == nil {
		return nil
	}
	n.stopOnce.Do(func() { n.stopErr = n.stop() })
	return n.stopErr
}

func (n *Node) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if n.kubelet != nil {
		n.deletePods(ctx)
	}
	n.kubelet.Stop()
	var err error
	if n.Before != nil {
		if n.containerd != nil {
			n.containerd.killTasks(ctx)
		}
		n.containerd.stop()
		socket := filepath.Join(n.Dir, "containerd", "containerd.sock")
		err = restore(n.Before, n.Dir, socket)
		if err == nil {
			_ = os.Remove(recordPath)
		}
	}
	switch {
	case n.LogDir == "":
	case n.KeepLogs || os.Getenv("KINJECT_KEEP_LOGS") != "":
		fmt.Fprintf(os.Stderr, "node: logs kept in %s\n", n.LogDir)
	default:
		_ = os.RemoveAll(n.LogDir)
	}
	// The machine's node lock stays held: the caller compares the host
	// with the record after Stop, before another run may start a node
	// (Release, or the process's exit, lets it go).
	return err
}

// Release lets another run start a node on this machine; call it after
// Stop, once the host has been compared with the record.
func (n *Node) Release() {
	if n != nil && n.lock != nil {
		n.lock.Close()
	}
}

// deletePods deletes every Pod on the Node and waits until containerd
// runs none of their containers: the kubelet then has torn down their
// networks (CNI DEL) and unmounted their volumes.
func (n *Node) deletePods(ctx context.Context) {
	admin, err := n.cluster.AdminClient()
	if err != nil {
		return
	}
	pods, err := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
	if err != nil {
		return
	}
	zero := int64(0)
	for _, p := range pods.Items {
		_ = admin.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := n.containerd.ctr(ctx, "tasks", "ls", "--quiet")
		return err == nil && strings.TrimSpace(out) == "", nil
	})
}

// MustStart starts the node for TestMain. When the machine cannot run
// one (ErrUnavailable, or the cluster skipped) it returns a node on
// which Require skips, except with CI=true, where it exits the process,
// as does any other failure. SIGINT and SIGTERM stop the node, then run
// also (the cluster's Stop), and exit; so does go test's -timeout coming
// near.
func MustStart(c *cluster.Cluster, also ...func()) *Node {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if c.Skipped() != "" {
		return &Node{skip: c.Skipped(), missing: true}
	}
	n, err := Start(ctx, c)
	switch {
	case (errors.Is(err, ErrUnavailable) || errors.Is(err, cluster.ErrMissingBinaries)) && !testbin.InCI():
		fmt.Fprintf(os.Stderr, "node: not started: %v\n", err)
		return &Node{skip: err.Error(), missing: errors.Is(err, cluster.ErrMissingBinaries)}
	case err != nil:
		fmt.Fprintf(os.Stderr, "node: FATAL: %v\n", err)
		for _, f := range also {
			f()
		}
		os.Exit(1)
	}
	n.stopOnSignal(also)
	n.stopBeforeTimeout(also)
	return n
}

// stopBeforeTimeout stops the node half a minute before go test's
// -timeout panics the test binary, which leaves no chance to stop it.
func (n *Node) stopBeforeTimeout(also []func()) {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return
	}
	d, err := time.ParseDuration(f.Value.String())
	if err != nil || d <= time.Minute {
		return
	}
	time.AfterFunc(d-30*time.Second, func() {
		fmt.Fprintf(os.Stderr, "node: the test binary's -timeout %s is near: stopping the node\n", d)
		n.exit(also)
	})
}

// stopOnSignal stops the node when the test binary is interrupted: a
// killed run must not leave kernel.panic_on_oops set.
func (n *Node) stopOnSignal(also []func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "node: %s: stopping the node\n", sig)
		n.exit(also)
	}()
}

// exit stops the node, then runs also, and exits the test binary.
func (n *Node) exit(also []func()) {
	if err := n.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "node: %v\n", err)
	}
	for _, f := range also {
		f()
	}
	os.Exit(1)
}

// Require fails t when the node could not be started for binaries a
// command of ours installs (testbin.Missing: a -short run skips instead),
// and skips it, or fails it in CI, when the host cannot run a node (not
// root, no containerd: testbin.Unavailable).
func (n *Node) Require(t testing.TB) {
	t.Helper()
	switch {
	case n == nil:
		testbin.Unavailable(t, "node not started")
	case n.skip != "" && n.missing:
		testbin.Missing(t, "%s", n.skip)
	case n.skip != "":
		testbin.Unavailable(t, "%s", n.skip)
	}
}

// Skipped says why the node was not started, or "".
func (n *Node) Skipped() string { return n.skip }

// DumpLogs writes the log paths and the last lines of each log to w.
func (n *Node) DumpLogs(w io.Writer, lines int) {
	for _, p := range []string{n.ContainerdLog, n.KubeletLog} {
		if p != "" {
			fmt.Fprintf(w, "==> %s <==\n%s\n", p, cluster.Tail(p, lines))
		}
	}
}
