package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// ScrapeInterval is how often Prometheus scrapes the kubelet.
const ScrapeInterval = 5 * time.Second

// CadvisorJob is the job of the kubelet's cAdvisor endpoint
// (/metrics/cadvisor), where kube-prometheus reads
// container_cpu_usage_seconds_total and container_memory_working_set_bytes.
const CadvisorJob = "kubelet-cadvisor"

// prometheusConfig scrapes the kubelet as kube-prometheus does: over
// HTTPS with a bearer token (the kubelet's certificate is self-signed).
const prometheusConfig = `global:
  scrape_interval: {{INTERVAL}}
  scrape_timeout: {{TIMEOUT}}
scrape_configs:
- job_name: {{JOB}}
  scheme: https
  metrics_path: /metrics/cadvisor
  tls_config:
    insecure_skip_verify: true
  authorization:
    credentials_file: {{TOKEN_FILE}}
  static_configs:
  - targets: ['{{KUBELET}}']
    labels:
      node: {{NODE}}
`

// Prometheus is Debian's prometheus (hack/install-tools.sh) run as a host
// process that scrapes the Node's kubelet every ScrapeInterval, its
// storage in a directory of its own, its HTTP API on loopback (URL).
type Prometheus struct {
	// URL is its HTTP API, http://127.0.0.1:PORT.
	URL string
	// Dir holds its configuration, storage and Log; kept after Stop when
	// KeepLogs is set (or KINJECT_KEEP_LOGS=1).
	Dir, Log string
	KeepLogs bool

	proc *cluster.Process
}

// StartPrometheus starts Prometheus scraping the kubelet's cAdvisor
// endpoint with cluster.MetricsUser's token (granted the RBAC the kubelet
// would check: nodes/metrics) and returns once a scrape has succeeded.
// c must run a Node (Start).
func StartPrometheus(ctx context.Context, c *cluster.Cluster) (_ *Prometheus, err error) {
	if c.MetricsToken() == "" {
		return nil, errors.New("start prometheus: the cluster was not started with Options.NodeName")
	}
	bin, err := cluster.FindBinary("PROMETHEUS", "prometheus")
	if err != nil {
		return nil, err
	}
	admin, err := c.AdminClient()
	if err != nil {
		return nil, err
	}
	if err := grantMetrics(ctx, admin); err != nil {
		return nil, err
	}
	kubelet, err := kubeletAddress(ctx, admin)
	if err != nil {
		return nil, err
	}
	p := &Prometheus{}
	defer func() {
		if err != nil {
			p.KeepLogs = true
			_ = p.Stop()
		}
	}()
	if p.Dir, err = os.MkdirTemp("", "kinject-prometheus-"); err != nil {
		return nil, fmt.Errorf("create prometheus dir: %w", err)
	}
	p.Log = filepath.Join(p.Dir, "prometheus.log")
	tokenFile := filepath.Join(p.Dir, "token")
	if err := os.WriteFile(tokenFile, []byte(c.MetricsToken()), 0o600); err != nil {
		return nil, fmt.Errorf("write prometheus token: %w", err)
	}
	config := strings.NewReplacer(
		"{{INTERVAL}}", ScrapeInterval.String(), "{{TIMEOUT}}", (ScrapeInterval * 4 / 5).String(),
		"{{JOB}}", CadvisorJob, "{{TOKEN_FILE}}", tokenFile, "{{KUBELET}}", kubelet, "{{NODE}}", Name,
	).Replace(prometheusConfig)
	configFile := filepath.Join(p.Dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("write prometheus config: %w", err)
	}
	// check config refuses a bad file with the reason, where the
	// server would only log it.
	if out, err := exec.CommandContext(ctx, "promtool", "check", "config", configFile).CombinedOutput(); err != nil && !errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("promtool check config: %w: %s", err, out)
	}
	ports, err := cluster.FreePorts(1)
	if err != nil {
		return nil, err
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	p.URL = "http://" + listen
	p.proc, err = cluster.StartProcess(bin, []string{
		"--config.file=" + configFile,
		"--storage.tsdb.path=" + filepath.Join(p.Dir, "data"),
		"--web.listen-address=" + listen,
		"--log.level=warn",
	}, p.Log)
	if err != nil {
		return nil, err
	}
	if err := cluster.WaitHealthy(ctx, p.proc, p.URL+"/-/ready", time.Minute); err != nil {
		return nil, fmt.Errorf("prometheus not ready: %w\n%s", err, cluster.Tail(p.Log, 30))
	}
	if err := p.waitUp(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// waitUp waits until the kubelet's target has been scraped: up is 1.
func (p *Prometheus) waitUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		series, err := p.Query(ctx, `up{job="`+CadvisorJob+`"}`, time.Time{})
		if err == nil && len(series) == 1 && len(series[0].Points) == 1 && series[0].Points[0].V == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for prometheus to scrape the kubelet: %w (last: %v %v)\n%s", ctx.Err(), series, err, cluster.Tail(p.Log, 30))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Stop stops Prometheus and removes its directory. It is safe on nil and
// more than once.
func (p *Prometheus) Stop() error {
	if p == nil {
		return nil
	}
	p.proc.Stop()
	p.proc = nil
	switch {
	case p.Dir == "":
	case p.KeepLogs || os.Getenv("KINJECT_KEEP_LOGS") != "":
		fmt.Fprintf(os.Stderr, "prometheus: log kept in %s\n", p.Log)
	default:
		_ = os.RemoveAll(p.Dir)
	}
	p.Dir = ""
	return nil
}

// ContainerSelector selects the cAdvisor series of container name of pod
// by its cgroup (the id label, kubepods/.../pod<uid>/<container id>),
// which cAdvisor always sets: it does not depend on the container, pod
// and namespace labels, which cAdvisor sets only when it reaches the
// runtime at /run/containerd/containerd.sock (Start links the node's
// containerd there when nothing else is).
func ContainerSelector(pod *corev1.Pod, name string) (string, error) {
	id, err := containerID(pod, name)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`{job=%q,id=~".*/pod%s/%s"}`, CadvisorJob, pod.UID, id), nil
}

// Series is one labelled series of a query's result: one point for an
// instant vector, every sample in the range for a range vector.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is a sample: its time and value.
type Point struct {
	T time.Time
	V float64
}

// Query evaluates promql at at (now when zero) through the HTTP API
// (/api/v1/query) and returns the series of a vector or matrix result.
func (p *Prometheus) Query(ctx context.Context, promql string, at time.Time) ([]Series, error) {
	q := url.Values{"query": {promql}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/query?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", promql, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", promql, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", promql, err)
	}
	return decodeQuery(promql, body)
}

// decodeQuery reads the HTTP API's answer to a query.
func decodeQuery(promql string, body []byte) ([]Series, error) {
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %s: decode %q: %w", promql, body, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", promql, r.Error)
	}
	var out []Series
	for _, res := range r.Data.Result {
		s := Series{Labels: res.Metric}
		values := res.Values
		if r.Data.ResultType == "vector" {
			values = [][]any{res.Value}
		}
		for _, v := range values {
			pt, err := decodePoint(v)
			if err != nil {
				return nil, fmt.Errorf("query %s: %w", promql, err)
			}
			s.Points = append(s.Points, pt)
		}
		out = append(out, s)
	}
	return out, nil
}

// decodePoint reads [unix seconds, "value"].
func decodePoint(v []any) (Point, error) {
	if len(v) != 2 {
		return Point{}, fmt.Errorf("sample %v: want [time, value]", v)
	}
	ts, ok := v[0].(float64)
	str, ok2 := v[1].(string)
	if !ok || !ok2 {
		return Point{}, fmt.Errorf("sample %v: want [number, string]", v)
	}
	val, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return Point{}, fmt.Errorf("sample %v: %w", v, err)
	}
	return Point{T: time.Unix(0, int64(ts*1e9)), V: val}, nil
}
