package node_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/test/cluster"
	"github.com/kinject/kubectl-inject/test/node"
)

// The load levels the sidecar is driven at, requests a second through
// its listener, each for warmUp then measure.
const (
	lowRate, highRate = 10, 400
	warmUp            = 15 * time.Second
	measure           = 40 * time.Second
)

// Tolerances, measured on this machine (2 shared cores): each source
// against the cgroup's own counter over the same window, and the two
// sources against each other over a level. The CPU ones are a fraction
// of the larger figure or an absolute floor in cores, whichever is
// larger: a few millicores at the low level are mostly noise.
const (
	cpuTolerance, cpuFloor = 0.25, 0.003
	memTolerance           = 0.15
)

// levelFigures is what each source said about the sidecar at a level.
type levelFigures struct {
	name                    string
	rate                    float64
	failed                  int64
	cgroup, server, prom    float64 // CPU, cores
	serverMem, promMem, mem int64   // working set, bytes
}

// TestMetrics runs metrics-server and Prometheus against the real node,
// drives an injected Pod's sidecar (the stand-in proxy) at two load
// levels, and checks that both sources see its CPU usage rise with the
// load and its memory, each within a tolerance of what the kernel's
// cgroup counters say over the same window, and agree with each other.
func TestMetrics(t *testing.T) {
	n.Require(t)
	ms, prom := startCollectors(t)

	ns := namespace(t, nil)
	mustSucceed(t, ways[0].deploy(t, ns, webDeployment("")), "inject")
	kubectl(t, "", "rollout", "status", "-n", ns, "deploy/web", "--timeout=2m")
	pod := readyPod(t, ns, "app=web")

	// The metrics API as a user reads it: metrics-server needs two
	// scrapes of a new container before it reports it.
	path := "/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods/" + pod.Name
	var usage map[string]node.Usage
	eventually(t, 3*node.MetricsResolution+10*time.Second, "the metrics API to report "+pod.Name, func() bool {
		r := execute(t, "", testbin.NeedTool(t, "kubectl.v1.37.2"), "get", "--raw", path)
		if r.code != 0 {
			return false
		}
		var err error
		usage, err = node.DecodePodMetrics([]byte(r.stdout))
		return err == nil && len(usage) == 2
	})
	for _, name := range []string{"app", "envoy"} {
		u, ok := usage[name]
		if !ok || u.Memory <= 0 {
			t.Errorf("kubectl get --raw %s: container %s: %+v, want a usage with memory > 0 (all: %v)", path, name, u, usage)
		}
	}
	t.Logf("metrics API, pod %s: %v", pod.Name, usage)

	sel, err := node.ContainerSelector(&pod, "envoy")
	if err != nil {
		t.Fatal(err)
	}
	logCadvisorLabels(t, prom, &pod, sel)

	sampler := startCgroupSampler(t, &pod, "envoy")
	url := "http://" + pod.Status.PodIP + ":10000/"
	var levels []levelFigures
	for _, lv := range []struct {
		name string
		rate int
	}{{"low", lowRate}, {"high", highRate}} {
		levels = append(levels, driveLevel(t, ms, prom, sampler, &pod, sel, url, lv.name, lv.rate))
	}
	low, high := levels[0], levels[1]
	for _, l := range levels {
		t.Logf("%-4s %6.1f req/s (%d failed): cpu cgroup %6.2fm metrics-server %6.2fm prometheus %6.2fm; memory cgroup %s metrics-server %s prometheus %s",
			l.name, l.rate, l.failed, 1000*l.cgroup, 1000*l.server, 1000*l.prom, mib(l.mem), mib(l.serverMem), mib(l.promMem))
		if l.failed > 0 {
			t.Errorf("%s: %d requests through the sidecar failed", l.name, l.failed)
		}
		if l.serverMem <= 0 || l.promMem <= 0 {
			t.Errorf("%s: memory metrics-server %d, prometheus %d: want > 0", l.name, l.serverMem, l.promMem)
		}
		if !near(l.server, l.prom, cpuTolerance, cpuFloor) {
			t.Errorf("%s: cpu metrics-server %.4f and prometheus %.4f differ by more than %.0f%% (or %.0fm)", l.name, l.server, l.prom, 100*cpuTolerance, 1000*cpuFloor)
		}
		if !near(float64(l.serverMem), float64(l.promMem), memTolerance, 0) {
			t.Errorf("%s: memory metrics-server %d and prometheus %d differ by more than %.0f%%", l.name, l.serverMem, l.promMem, 100*memTolerance)
		}
	}
	// The load must have made a difference the kernel sees, or the
	// sources' rise proves nothing.
	if high.cgroup < 2*low.cgroup {
		t.Fatalf("the sidecar's cgroup cpu went from %.4f to only %.4f: the load generator did not load it", low.cgroup, high.cgroup)
	}
	if high.server <= low.server || high.prom <= low.prom {
		t.Errorf("cpu from low to high load: metrics-server %.4f -> %.4f, prometheus %.4f -> %.4f: want both higher", low.server, high.server, low.prom, high.prom)
	}
}

// startCollectors starts metrics-server and Prometheus for t, stopped
// when it ends (their logs kept when it failed).
func startCollectors(t *testing.T) (*node.MetricsServer, *node.Prometheus) {
	t.Helper()
	ctx := context.Background()
	ms, err := node.StartMetricsServer(ctx, c)
	requireStarted(t, "metrics-server", err)
	t.Cleanup(func() {
		if t.Failed() {
			ms.KeepLogs = true
		}
		if err := ms.Stop(); err != nil {
			t.Error(err)
		}
	})
	prom, err := node.StartPrometheus(ctx, c)
	requireStarted(t, "prometheus", err)
	t.Cleanup(func() {
		if t.Failed() {
			prom.KeepLogs = true
		}
		_ = prom.Stop()
	})
	return ms, prom
}

// requireStarted fails t (or skips it, under -short, when the collector
// is not installed) when a collector could not be started.
func requireStarted(t *testing.T, what string, err error) {
	t.Helper()
	switch {
	case errors.Is(err, cluster.ErrMissingBinaries):
		testbin.Missing(t, "%s not installed (hack/install-tools.sh): %v", what, err)
	case err != nil:
		t.Fatalf("start %s: %v", what, err)
	}
}

// driveLevel loads the sidecar at rate for warmUp then measure, and
// returns what the cgroup, metrics-server and Prometheus said about the
// measured part; each source is held to the cgroup over the windows it
// reported on.
func driveLevel(t *testing.T, ms *node.MetricsServer, prom *node.Prometheus, sampler *cgroupSampler, pod *corev1.Pod, sel, url, name string, rate int) levelFigures {
	t.Helper()
	ctx := context.Background()
	f := levelFigures{name: name}
	l := startLoad(url, rate)
	from := time.Now().Add(warmUp)
	time.Sleep(warmUp)
	// metrics-server: every usage it serves whose window lies under this
	// level's load, told apart by their timestamps. (Each is held to the
	// cgroup over its own window: on a busy machine its windows stretch,
	// and one may not fit in the measured part alone.)
	loaded := l.began.Add(time.Second)
	seen := map[time.Time]node.Usage{}
	for end := from.Add(measure); time.Now().Before(end); time.Sleep(2 * time.Second) {
		u, err := ms.PodUsage(ctx, pod.Namespace, pod.Name)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := u["envoy"]; ok && !e.Time.Add(-e.Window).Before(loaded) {
			seen[e.Time] = e
		}
	}
	to := time.Now()
	f.rate, f.failed = l.finish()
	if len(seen) == 0 {
		t.Fatalf("%s: metrics-server reported no usage of the sidecar between %s and %s", name, loaded, to)
	}
	var sum, truth float64
	var windows time.Duration
	for _, u := range sortedUsages(seen) {
		want, err := sampler.cpuBetween(u.Time.Add(-u.Window), u.Time)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: metrics-server %s window %s: cpu %.4f, cgroup %.4f; memory %s", name, u.Time.Format("15:04:05.000"), u.Window, u.CPU, want, mib(u.Memory))
		if !near(u.CPU, want, cpuTolerance, cpuFloor) {
			t.Errorf("%s: metrics-server's cpu %.4f over %s to %s, the cgroup's %.4f: more than %.0f%% (or %.0fm) apart",
				name, u.CPU, u.Window, u.Time, want, 100*cpuTolerance, 1000*cpuFloor)
		}
		sum += u.CPU * u.Window.Seconds()
		truth += want * u.Window.Seconds()
		windows += u.Window
		f.serverMem = u.Memory
	}
	f.server = sum / windows.Seconds()

	// Prometheus: the counter's samples in the measured part, as
	// cAdvisor stamped them.
	window := to.Sub(from).Round(time.Second)
	series, err := prom.Query(ctx, "container_cpu_usage_seconds_total"+sel+"["+window.String()+"]", to)
	if err != nil || len(series) != 1 || len(series[0].Points) < 2 {
		t.Fatalf("%s: prometheus: %v, want one series of 2 samples or more: %v", name, series, err)
	}
	pts := series[0].Points
	first, last := pts[0], pts[len(pts)-1]
	f.prom = (last.V - first.V) / last.T.Sub(first.T).Seconds()
	want, err := sampler.cpuBetween(first.T, last.T)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: prometheus %d samples %s to %s: cpu %.4f, cgroup %.4f", name, len(pts), first.T.Format("15:04:05.000"), last.T.Format("15:04:05.000"), f.prom, want)
	if !near(f.prom, want, cpuTolerance, cpuFloor) {
		t.Errorf("%s: prometheus's cpu %.4f from %s to %s, the cgroup's %.4f: more than %.0f%% (or %.0fm) apart",
			name, f.prom, first.T, last.T, want, 100*cpuTolerance, 1000*cpuFloor)
	}
	f.cgroup, err = sampler.cpuBetween(from, to)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := prom.Query(ctx, "container_memory_working_set_bytes"+sel, to)
	if err != nil || len(mem) != 1 {
		t.Fatalf("%s: prometheus working set: %v, want one series: %v", name, mem, err)
	}
	f.promMem = int64(mem[0].Points[0].V)
	f.mem = sampler.last().Memory
	return f
}

// logCadvisorLabels logs the labels of the sidecar's cAdvisor series and
// checks that it carries its container, Pod and namespace, by which
// kube-prometheus' queries (and kubectl inject size) select it.
func logCadvisorLabels(t *testing.T, prom *node.Prometheus, pod *corev1.Pod, sel string) {
	t.Helper()
	ctx := context.Background()
	var series []node.Series
	eventually(t, time.Minute, "cAdvisor's series of the sidecar in prometheus", func() bool {
		var err error
		series, err = prom.Query(ctx, "container_cpu_usage_seconds_total"+sel, time.Time{})
		return err == nil && len(series) == 1
	})
	t.Logf("cAdvisor's sidecar series: %s", labels(series[0].Labels))
	if got := series[0].Labels; got["container"] != "envoy" || got["pod"] != pod.Name || got["namespace"] != pod.Namespace {
		t.Errorf("cAdvisor's sidecar series has container %q pod %q namespace %q, want envoy %s/%s", got["container"], got["pod"], got["namespace"], pod.Namespace, pod.Name)
	}
}

func labels(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func sortedUsages(m map[time.Time]node.Usage) []node.Usage {
	var out []node.Usage
	for _, u := range m {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// near says whether a and b differ by at most frac of the larger, or by
// at most floor.
func near(a, b, frac, floor float64) bool {
	d := math.Abs(a - b)
	return d <= floor || d <= frac*math.Max(math.Abs(a), math.Abs(b))
}

func mib(b int64) string { return fmt.Sprintf("%.1fMi", float64(b)/(1<<20)) }
