package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// Cluster is a running etcd plus kube-apiserver. The zero value is not usable;
// get one from Start or MustStart.
type Cluster struct {
	// URL is the API server address, https://127.0.0.1:PORT.
	URL string
	// Dir holds etcd data, certificates, tokens and the kubeconfig files.
	Dir string
	// AdminKubeconfig and ViewerKubeconfig are kubeconfig file paths.
	AdminKubeconfig, ViewerKubeconfig string
	// NodeName and NodeKubeconfig are the real Node's name and its
	// kubelet's kubeconfig (user system:node:NodeName), when
	// Options.NodeName asked for one.
	NodeName, NodeKubeconfig string
	// MetricsKubeconfig is MetricsUser's kubeconfig (with a real Node
	// only), for the metrics collectors of the Node's tests.
	MetricsKubeconfig string
	// EtcdLog and APIServerLog are the processes' log files. They live in
	// LogDir, which survives Stop when KeepLogs is set. With a control
	// plane, so do ControllerManagerLog, SchedulerLog and KwokLog.
	EtcdLog, APIServerLog, LogDir               string
	ControllerManagerLog, SchedulerLog, KwokLog string
	// Nodes are the names of the simulated Nodes (control plane only).
	Nodes []string
	// KeepLogs keeps LogDir after Stop (Finish sets it on failure, and so
	// does the environment variable KINJECT_KEEP_LOGS=1).
	KeepLogs bool

	adminToken, viewerToken, nodeToken string
	metricsToken                       string
	componentTokens                    map[string]string
	etcd, apiserver                    *process
	// the control plane, when started
	controllerManager, scheduler, kwok *process
	skip                               string
	// apiBin and apiArgs start the API server again after StopAPIServer.
	apiBin  string
	apiArgs []string
	restart int
}

// ControlPlaneEtcd is the etcd of a control plane (hack/build-apiserver.sh
// builds it): v3.6, where Debian's etcd-server is 3.4.23.
const ControlPlaneEtcd = "etcd.v3.6.16"

// Options say what StartWith runs.
type Options struct {
	// APIServerArgs are added to the API server's flags.
	APIServerArgs []string
	// ControlPlane also runs kube-controller-manager (the Controllers),
	// kube-scheduler and kwok with Nodes simulated Nodes
	// (DefaultNodes when 0): controllers create Pods, the scheduler
	// binds them, kwok marks them Running and Ready, rollouts complete.
	// It adds 6-11 s to the start.
	ControlPlane bool
	Nodes        int
	// NodeName prepares the cluster for a real kubelet registering that
	// Node (test/node), and implies ControlPlane without kwok's Nodes:
	// the API server authorizes with Node,RBAC and admits with
	// NodeRestriction, as a cluster with nodes does; the Node gets a
	// token of its own (NodeKubeconfig); the API server reaches the
	// kubelet at the Node's InternalIP; the controller manager also
	// publishes kube-root-ca.crt, which every Pod's service-account
	// volume mounts.
	NodeName string
}

// Start starts etcd and kube-apiserver and waits until the API server is
// ready; extraArgs are added to the API server's flags. When a binary
// cannot be found the error wraps ErrMissingBinaries. On other failures the
// error includes the tail of the failing process's log.
func Start(ctx context.Context, extraArgs ...string) (*Cluster, error) {
	return StartWith(ctx, Options{APIServerArgs: extraArgs})
}

// StartWith is Start with a control plane when opts asks for one.
func StartWith(ctx context.Context, opts Options) (_ *Cluster, err error) {
	etcdName := "etcd"
	if opts.NodeName != "" {
		opts.ControlPlane = true
	}
	if opts.ControlPlane {
		// kwok's client asks for streaming lists, which kube-apiserver
		// serves only over etcd 3.4.31+ or 3.5.13+.
		etcdName = ControlPlaneEtcd
	}
	etcdBin, err := findBinary("ETCD", etcdName)
	if err != nil {
		return nil, err
	}
	apiBin, err := findBinary("KUBE_APISERVER", "kube-apiserver")
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.Dir, err = os.MkdirTemp("", "kinject-cluster-"); err != nil {
		return nil, fmt.Errorf("create cluster dir: %w", err)
	}
	if c.LogDir, err = os.MkdirTemp("", "kinject-cluster-logs-"); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	c.EtcdLog = filepath.Join(c.LogDir, "etcd.log")
	c.APIServerLog = filepath.Join(c.LogDir, "kube-apiserver.log")

	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.URL = "https://127.0.0.1:" + strconv.Itoa(ports[2])

	c.etcd, err = startProcess(etcdBin, []string{
		"--name=kinject",
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=kinject=" + peerURL,
		"--logger=zap",
	}, c.EtcdLog)
	if err != nil {
		return nil, err
	}
	if err := waitHealthy(ctx, c.etcd, etcdURL+"/health", "", 30*time.Second); err != nil {
		return nil, fmt.Errorf("etcd not healthy: %w\n%s", err, tail(c.EtcdLog, 30))
	}

	c.NodeName = opts.NodeName
	if err := c.writeAuthFiles(); err != nil {
		return nil, err
	}
	c.apiBin, c.apiArgs = apiBin, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + filepath.Join(c.Dir, "certs"),
		"--authorization-mode=" + authorizationMode(opts),
		"--token-auth-file=" + filepath.Join(c.Dir, "tokens.csv"),
		"--service-account-key-file=" + filepath.Join(c.Dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(c.Dir, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.0.0.0/24",
		// the advertised loopback address is not a valid Endpoints address,
		// and nothing here needs the kubernetes service endpoints.
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--profiling=false",
	}
	// Aggregated APIs (metrics.k8s.io from metrics-server) are proxied
	// with the front proxy's client certificate.
	c.apiArgs = append(c.apiArgs, c.frontProxyArgs()...)
	if opts.NodeName != "" {
		c.apiArgs = append(c.apiArgs,
			"--enable-admission-plugins=NodeRestriction",
			// kubectl logs and exec reach the kubelet at the Node's
			// address, not at its host name, which nothing resolves.
			"--kubelet-preferred-address-types=InternalIP,Hostname",
		)
	}
	c.apiArgs = append(c.apiArgs, opts.APIServerArgs...)
	if err := c.startAPIServer(ctx, c.APIServerLog); err != nil {
		return nil, err
	}
	if opts.ControlPlane {
		nodes := opts.Nodes
		if nodes <= 0 {
			nodes = DefaultNodes
		}
		if opts.NodeName != "" {
			nodes = 0
		}
		if err := c.startControlPlane(ctx, nodes); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) startAPIServer(ctx context.Context, logPath string) error {
	var err error
	if c.apiserver, err = startProcess(c.apiBin, c.apiArgs, logPath); err != nil {
		return err
	}
	if err := waitHealthy(ctx, c.apiserver, c.URL+"/readyz", c.adminToken, 2*time.Minute); err != nil {
		return fmt.Errorf("kube-apiserver not ready: %w\n%s", err, tail(logPath, 40))
	}
	return nil
}

// authorizationMode is RBAC, and Node,RBAC for a cluster with a real
// Node, whose kubelet may then read only what its Pods use.
func authorizationMode(opts Options) string {
	if opts.NodeName != "" {
		return "Node,RBAC"
	}
	return "RBAC"
}

// StopAPIServer stops the API server (etcd keeps running), for tests of
// what clients do when the server goes away.
func (c *Cluster) StopAPIServer() { c.apiserver.stop() }

// RestartAPIServer starts the API server again on the same port and data
// after StopAPIServer, and waits until it is ready. Its log goes to a new
// file in LogDir.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.restart++
	return c.startAPIServer(ctx, filepath.Join(c.LogDir, fmt.Sprintf("kube-apiserver.%d.log", c.restart)))
}

// MustStart is Start for TestMain. When the binaries are missing it returns a
// cluster on which Require fails each test (skips it with -short), except
// with CI=true, where it exits the process. Any other failure exits the
// process.
func MustStart(extraArgs ...string) *Cluster {
	return MustStartWith(Options{APIServerArgs: extraArgs})
}

// MustStartWith is MustStart with Options.
func MustStartWith(opts Options) *Cluster {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := StartWith(ctx, opts)
	switch {
	case errors.Is(err, ErrMissingBinaries) && !testbin.InCI():
		fmt.Fprintf(os.Stderr, "cluster: not started (each test that needs it fails; -short skips them): %v\n", err)
		return &Cluster{skip: err.Error()}
	case err != nil:
		fmt.Fprintf(os.Stderr, "cluster: FATAL: %v\n", err)
		os.Exit(1)
	}
	return c
}

// Require fails t when the cluster could not be started because binaries
// are missing, naming the commands that install them (testbin.Missing: a
// -short run skips instead).
func (c *Cluster) Require(t testing.TB) {
	t.Helper()
	if c == nil || c.skip != "" {
		reason := "cluster not started"
		if c != nil {
			reason = c.skip
		}
		testbin.Missing(t, "%s", reason)
	}
}

// Skipped says why the cluster was not started (binaries missing,
// outside CI), or "" when it runs.
func (c *Cluster) Skipped() string {
	if c == nil {
		return "cluster not started"
	}
	return c.skip
}

// Finish stops the cluster and returns code. When code is non-zero it prints
// the log paths and tails and keeps the logs. Use as os.Exit(c.Finish(m.Run())).
func (c *Cluster) Finish(code int) int {
	if code != 0 && c != nil && c.skip == "" {
		c.KeepLogs = true
		c.DumpLogs(os.Stderr, 40)
	}
	c.Stop()
	return code
}

// DumpLogs writes the log paths and the last n lines of each log to w.
func (c *Cluster) DumpLogs(w io.Writer, n int) {
	for _, p := range []string{c.EtcdLog, c.APIServerLog, c.ControllerManagerLog, c.SchedulerLog, c.KwokLog} {
		if p != "" {
			fmt.Fprintf(w, "==> %s <==\n%s\n", p, tail(p, n))
		}
	}
}

// Stop kills every process and removes the temporary directories (LogDir is
// kept when KeepLogs is set). It is safe to call more than once and on nil.
func (c *Cluster) Stop() {
	if c == nil {
		return
	}
	// kwok and the controllers first: they would log every moment the
	// API server is gone.
	c.kwok.stop()
	c.scheduler.stop()
	c.controllerManager.stop()
	c.apiserver.stop()
	c.etcd.stop()
	if c.Dir != "" {
		_ = os.RemoveAll(c.Dir)
	}
	switch {
	case c.LogDir == "":
	case c.KeepLogs || os.Getenv("KINJECT_KEEP_LOGS") != "":
		fmt.Fprintf(os.Stderr, "cluster: logs kept in %s\n", c.LogDir)
	default:
		_ = os.RemoveAll(c.LogDir)
	}
}

// AdminConfig returns a new rest.Config for the admin user (system:masters).
func (c *Cluster) AdminConfig() *rest.Config { return c.config(c.adminToken) }

// ViewerConfig returns a new rest.Config for the restricted viewer user.
func (c *Cluster) ViewerConfig() *rest.Config { return c.config(c.viewerToken) }

func (c *Cluster) config(token string) *rest.Config {
	return &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             100,
		Burst:           200,
	}
}

// AdminClient returns a clientset for the admin user.
func (c *Cluster) AdminClient() (kubernetes.Interface, error) {
	cs, err := kubernetes.NewForConfig(c.AdminConfig())
	if err != nil {
		return nil, fmt.Errorf("admin clientset: %w", err)
	}
	return cs, nil
}

// ViewerClient returns a clientset for the viewer user.
func (c *Cluster) ViewerClient() (kubernetes.Interface, error) {
	cs, err := kubernetes.NewForConfig(c.ViewerConfig())
	if err != nil {
		return nil, fmt.Errorf("viewer clientset: %w", err)
	}
	return cs, nil
}
