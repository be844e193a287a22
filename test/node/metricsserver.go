package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// MetricsResolution is how often metrics-server scrapes the kubelet: its
// smallest --metric-resolution. A usage it serves is the rate between
// its last two scrapes.
const MetricsResolution = 10 * time.Second

// The aggregated API metrics-server serves, and the Service the API
// server reaches it through.
const (
	metricsAPIService = "v1beta1.metrics.k8s.io"
	metricsService    = "kinject-metrics-server"
)

var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// MetricsServer is metrics-server (v0.8.0, hack/install-tools.sh) run as
// a host process against a cluster with a real Node, and aggregated by
// its API server as metrics.k8s.io/v1beta1, as a cluster runs it. No
// image can be pulled here, so it is not a Pod: it listens on loopback
// only, and the API server reaches it through an ExternalName Service
// naming 127.0.0.1 (a Service of type ClusterIP would need a proxy, and
// an EndpointSlice may not hold a loopback address).
type MetricsServer struct {
	// Dir holds its certificates and Log; kept after Stop when KeepLogs
	// is set (or KINJECT_KEEP_LOGS=1).
	Dir, Log string
	KeepLogs bool
	// Port is its HTTPS port on 127.0.0.1.
	Port int

	proc  *cluster.Process
	admin kubernetes.Interface
	dyn   dynamic.Interface
}

// StartMetricsServer grants cluster.MetricsUser metrics-server's RBAC,
// starts metrics-server with that user's kubeconfig, and registers its
// APIService once it is ready (it has scraped the kubelet), so that
// discovery never lists an API that cannot answer. It returns when the
// API server serves the Node's metrics. c must run a Node (Start).
func StartMetricsServer(ctx context.Context, c *cluster.Cluster) (_ *MetricsServer, err error) {
	if c.MetricsKubeconfig == "" {
		return nil, errors.New("start metrics-server: the cluster was not started with Options.NodeName")
	}
	bin, err := cluster.FindBinary("METRICS_SERVER", "metrics-server")
	if err != nil {
		return nil, err
	}
	m := &MetricsServer{}
	if m.admin, err = c.AdminClient(); err != nil {
		return nil, err
	}
	if m.dyn, err = dynamic.NewForConfig(c.AdminConfig()); err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	if err := grantMetrics(ctx, m.admin); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.KeepLogs = true
			_ = m.Stop()
		}
	}()
	if m.Dir, err = os.MkdirTemp("", "kinject-metrics-server-"); err != nil {
		return nil, fmt.Errorf("create metrics-server dir: %w", err)
	}
	m.Log = filepath.Join(m.Dir, "metrics-server.log")
	ports, err := cluster.FreePorts(1)
	if err != nil {
		return nil, err
	}
	m.Port = ports[0]
	m.proc, err = cluster.StartProcess(bin, []string{
		"--kubeconfig=" + c.MetricsKubeconfig,
		// Without these it looks for an in-cluster config to check
		// the requests the aggregator proxies.
		"--authentication-kubeconfig=" + c.MetricsKubeconfig,
		"--authorization-kubeconfig=" + c.MetricsKubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(m.Port),
		"--cert-dir=" + filepath.Join(m.Dir, "certs"),
		// The kubelet's serving certificate is self-signed, and its
		// port, picked free, is the one its Node's status gives.
		"--kubelet-insecure-tls",
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-use-node-status-port",
		"--metric-resolution=" + MetricsResolution.String(),
		// It must be under 90% of the resolution (default 10s).
		"--kubelet-request-timeout=5s",
	}, m.Log)
	if err != nil {
		return nil, err
	}
	// /readyz passes once a scrape of the kubelet has been stored.
	if err := cluster.WaitHealthy(ctx, m.proc, fmt.Sprintf("https://127.0.0.1:%d/readyz", m.Port), 2*time.Minute); err != nil {
		return nil, fmt.Errorf("metrics-server not ready: %w\n%s", err, cluster.Tail(m.Log, 30))
	}
	if err := m.register(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// register creates the Service and the APIService, and waits until the
// API server calls it Available and serves the Node's metrics.
func (m *MetricsServer) register(ctx context.Context) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: metricsService, Namespace: metav1.NamespaceSystem},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "127.0.0.1",
			Ports:        []corev1.ServicePort{{Name: "https", Port: int32(m.Port), TargetPort: intstr.FromInt(m.Port)}},
		},
	}
	if _, err := m.admin.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": metricsAPIService},
		"spec": map[string]any{
			"group":   "metrics.k8s.io",
			"version": "v1beta1",
			"service": map[string]any{"namespace": metav1.NamespaceSystem, "name": metricsService, "port": int64(m.Port)},
			// metrics-server's certificate is self-signed, as its own
			// manifests leave it.
			"insecureSkipTLSVerify": true,
			"groupPriorityMinimum":  int64(100),
			"versionPriority":       int64(100),
		},
	}}
	if _, err := m.dyn.Resource(apiServices).Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create apiservice %s: %w", metricsAPIService, err)
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = m.admin.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes", Name).DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the API server to serve node %s's metrics from metrics-server: %w (last: %w)\n%s", Name, err, last, cluster.Tail(m.Log, 30))
	}
	return nil
}

// Stop removes the APIService and its Service (a registered API that
// does not answer would fail every client's discovery), stops
// metrics-server and removes its directory. It is safe on nil and more
// than once.
func (m *MetricsServer) Stop() error {
	if m == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if m.dyn != nil {
		if err := m.dyn.Resource(apiServices).Delete(ctx, metricsAPIService, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete apiservice %s: %w", metricsAPIService, err))
		}
	}
	if m.admin != nil {
		if err := m.admin.CoreV1().Services(metav1.NamespaceSystem).Delete(ctx, metricsService, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete service %s: %w", metricsService, err))
		}
	}
	m.proc.Stop()
	m.proc = nil
	switch {
	case m.Dir == "":
	case m.KeepLogs || os.Getenv("KINJECT_KEEP_LOGS") != "":
		fmt.Fprintf(os.Stderr, "metrics-server: log kept in %s\n", m.Log)
	default:
		_ = os.RemoveAll(m.Dir)
	}
	m.Dir = ""
	return errors.Join(errs...)
}

// PodUsage reads the usage of each container of a Pod from the metrics
// API (metrics.k8s.io/v1beta1, through the API server), by container
// name.
func (m *MetricsServer) PodUsage(ctx context.Context, namespace, pod string) (map[string]Usage, error) {
	raw, err := m.admin.Discovery().RESTClient().Get().
		AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", namespace, "pods", pod).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("get pod metrics %s/%s: %w", namespace, pod, err)
	}
	return DecodePodMetrics(raw)
}

// DecodePodMetrics reads a PodMetrics object (what kubectl get --raw
// /apis/metrics.k8s.io/v1beta1/namespaces/NS/pods/NAME prints) into a
// Usage by container name.
func DecodePodMetrics(raw []byte) (map[string]Usage, error) {
	var pm struct {
		Timestamp  metav1.Time     `json:"timestamp"`
		Window     metav1.Duration `json:"window"`
		Containers []struct {
			Name  string              `json:"name"`
			Usage corev1.ResourceList `json:"usage"`
		} `json:"containers"`
	}
	if err := json.Unmarshal(raw, &pm); err != nil {
		return nil, fmt.Errorf("decode pod metrics: %w", err)
	}
	out := map[string]Usage{}
	for _, c := range pm.Containers {
		cpu, mem := c.Usage[corev1.ResourceCPU], c.Usage[corev1.ResourceMemory]
		out[c.Name] = Usage{
			CPU:    cpu.AsApproximateFloat64(),
			Memory: mem.Value(),
			Time:   pm.Timestamp.Time,
			Window: pm.Window.Duration,
		}
	}
	return out, nil
}

// Usage is a container's CPU and memory as a source reports them.
type Usage struct {
	// CPU is in cores, the average over Window ending at Time.
	CPU float64
	// Memory is the working set in bytes (usage less inactive file
	// pages), at Time.
	Memory int64
	Time   time.Time
	Window time.Duration
}

// String prints the usage in the units of a Pod's requests.
func (u Usage) String() string {
	return fmt.Sprintf("cpu %s memory %s", resource.NewMilliQuantity(int64(u.CPU*1000+0.5), resource.DecimalSI), resource.NewQuantity(u.Memory, resource.BinarySI))
}
