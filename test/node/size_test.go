package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// sizeFleet is the test's fleet: a quiet workload of two Pods and a busy
// one, each Pod's sidecar driven at its rate (requests a second).
var sizeFleet = []struct {
	name     string
	replicas int
	rate     int
}{
	{"quiet", 2, 5},
	{"busy", 1, 300},
}

// The windows of TestSize: the load runs sizeWarmUp before the sources
// are read, so that every one-minute rate Prometheus computes over
// sizeWindow lies under load; the metrics API is sampled over the same
// sizeWindow.
const (
	sizeWarmUp  = 75 * time.Second
	sizeWindow  = 2 * time.Minute
	sizeSamples = "5" // --min-samples: 2m is 9 Prometheus steps of 15 s and at most 12 metrics-server scrapes a Pod
)

// Tolerances of a recommendation against what the test computed from
// the kernel's counters: CPU within 30% of the larger or 5m (a quiet
// proxy's few millicores are mostly noise), memory within 15%.
const (
	sizeCPUTolerance, sizeCPUFloor = 0.30, 0.005
	sizeMemTolerance               = 0.15
)

// sizeList is kubectl inject size -o json.
type sizeList struct {
	Kind  string     `json:"kind"`
	Items []sizedRow `json:"items"`
}

type sizedRow struct {
	Namespace   string        `json:"namespace"`
	Workload    string        `json:"workload"`
	Container   string        `json:"container"`
	Pods        int           `json:"pods"`
	Samples     int           `json:"samples"`
	ObservedCPU float64       `json:"observedCPU"`
	ObservedMem float64       `json:"observedMemoryPeak"`
	Now         sizeResources `json:"now"`
	Recommended sizeResources `json:"recommended"`
	Reason      string        `json:"reason"`
	Window      string        `json:"window"`
	FreedCPU    float64       `json:"freedCPU"`
	FreedMemory float64       `json:"freedMemory"`
	Applied     bool          `json:"applied"`
}

type sizeResources struct {
	CPURequest    float64 `json:"cpuRequest"`
	MemoryRequest float64 `json:"memoryRequest"`
	MemoryLimit   float64 `json:"memoryLimit"`
}

// sizedPod is one Pod of the fleet: its sidecar's cgroup sampler and
// its load.
type sizedPod struct {
	workload string
	pod      corev1.Pod
	sampler  *cgroupSampler
	load     *load
}

// TestSize runs kubectl inject size on the real node, with metrics-server
// and Prometheus scraping its kubelet: two workloads injected at
// admission, their sidecars driven at two load levels, are sized from
// each source within a tolerance of the usage the test computed itself
// from the sidecars' cgroups over the same windows; then size --apply
// and restart resize the sidecars in place (Pod UIDs, app containers and
// restart counts unchanged), to the requests the kubelet then reports.
func TestSize(t *testing.T) {
	n.Require(t)
	ctx := context.Background()
	// metrics-server answers size through the API server.
	_, prom := startCollectors(t)

	ns := namespace(t, nil)
	enableAdmission(t, ns, "")
	for _, w := range sizeFleet {
		manifest := strings.NewReplacer("name: web", "name: "+w.name, "app: web", "app: "+w.name, "replicas: 1", fmt.Sprintf("replicas: %d", w.replicas)).Replace(webDeployment(""))
		kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	}
	var fleet []*sizedPod
	for _, w := range sizeFleet {
		kubectl(t, "", "rollout", "status", "-n", ns, "deploy/"+w.name, "--timeout=2m")
		pods := podsOf(t, ns, "app="+w.name)
		if len(pods) != w.replicas {
			t.Fatalf("deploy/%s has %d Pods, want %d", w.name, len(pods), w.replicas)
		}
		for i := range pods {
			p := &sizedPod{workload: w.name, pod: pods[i]}
			p.sampler = startCgroupSampler(t, &p.pod, "envoy")
			p.load = startLoad("http://"+p.pod.Status.PodIP+":10000/", w.rate)
			fleet = append(fleet, p)
		}
	}
	stopped := false
	stopLoads := func() {
		if stopped {
			return
		}
		stopped = true
		for _, p := range fleet {
			rate, failed := p.load.finish()
			t.Logf("pod %s (%s): %.1f requests a second, %d failed", p.pod.Name, p.workload, rate, failed)
			if failed > 0 {
				t.Errorf("pod %s: %d requests through the sidecar failed", p.pod.Name, failed)
			}
		}
	}
	t.Cleanup(stopLoads)
	time.Sleep(sizeWarmUp)

	// The metrics API, sampled for the window, then Prometheus over the
	// same window: both while the load runs.
	watchFrom := time.Now()
	fromAPI := sizeJSON(t, inject(t, "size", "-n", ns, "--watch", sizeWindow.String(), "--interval", "5s", "--min-samples", sizeSamples, "-o", "json"))
	watchTo := time.Now()
	// size's window ends when it starts, within a second of promTo.
	promTo := time.Now()
	fromProm := sizeJSON(t, inject(t, "size", "-n", ns, "--prometheus", prom.URL, "--window", sizeWindow.String(), "--min-samples", sizeSamples, "-o", "json"))
	time.Sleep(time.Second) // a cgroup sample after every window's end

	for source, got := range map[string]sizeList{"metrics API": fromAPI, "prometheus": fromProm} {
		if len(got.Items) != len(sizeFleet) {
			t.Fatalf("%s: %d rows, want one per workload (%d): %+v", source, len(got.Items), len(sizeFleet), got.Items)
		}
	}
	for _, w := range sizeFleet {
		pods := podsOfWorkload(fleet, w.name)
		// What the test measured: the metrics API's CPU samples are rates
		// over metrics-server's scrape interval; Prometheus' are one-minute
		// rates every 15 s over the window ending when size ran.
		apiCPU := cgroupRates(t, pods, watchFrom.Add(node.MetricsResolution), watchTo, node.MetricsResolution, node.MetricsResolution)
		promCPU := cgroupRates(t, pods, promTo.Add(-sizeWindow), promTo, 15*time.Second, time.Minute)
		memPeak := cgroupPeak(pods, promTo.Add(-sizeWindow-time.Minute), promTo)
		for _, check := range []struct {
			source string
			rows   sizeList
			cpu    []float64
		}{{"metrics API", fromAPI, apiCPU}, {"prometheus", fromProm, promCPU}} {
			row := rowOf(t, check.rows, "deployment/"+w.name)
			wantCPU := nearestRank(check.cpu, 0.95)
			wantMem := memPeak * 1.15
			t.Logf("%s %-5s: %d Pods, %d samples; cpu p95 measured %.1fm, size observed %.1fm, recommends %.0fm; memory peak measured %s, size observed %s, recommends %s (limit %s)",
				check.source, w.name, row.Pods, row.Samples, 1000*wantCPU, 1000*row.ObservedCPU, 1000*row.Recommended.CPURequest,
				mib(int64(memPeak)), mib(int64(row.ObservedMem)), mib(int64(row.Recommended.MemoryRequest)), mib(int64(row.Recommended.MemoryLimit)))
			if row.Reason != "" || row.Pods != w.replicas {
				t.Errorf("%s: %s: reason %q, %d Pods; want sized from %d Pods", check.source, w.name, row.Reason, row.Pods, w.replicas)
				continue
			}
			if !near(row.Recommended.CPURequest, wantCPU, sizeCPUTolerance, sizeCPUFloor) {
				t.Errorf("%s: %s: recommends cpu %.4f, the cgroups' p95 is %.4f: more than %.0f%% (or %.0fm) apart",
					check.source, w.name, row.Recommended.CPURequest, wantCPU, 100*sizeCPUTolerance, 1000*sizeCPUFloor)
			}
			if !near(row.Recommended.MemoryRequest, wantMem, sizeMemTolerance, 0) {
				t.Errorf("%s: %s: recommends memory %s, the cgroups' peak +15%% is %s: more than %.0f%% apart",
					check.source, w.name, mib(int64(row.Recommended.MemoryRequest)), mib(int64(wantMem)), 100*sizeMemTolerance)
			}
			if row.Recommended.MemoryRequest < row.ObservedMem {
				t.Errorf("%s: %s: memory %s below the peak seen %s", check.source, w.name, mib(int64(row.Recommended.MemoryRequest)), mib(int64(row.ObservedMem)))
			}
			// The template's limit is 8 times its request (512Mi, 64Mi).
			if want := math.Ceil(row.Recommended.MemoryRequest*8/(1<<20)) * (1 << 20); row.Recommended.MemoryLimit != want {
				t.Errorf("%s: %s: memory limit %s, want the template's ratio: %s", check.source, w.name, mib(int64(row.Recommended.MemoryLimit)), mib(int64(want)))
			}
			freedCPU := (row.Now.CPURequest - row.Recommended.CPURequest) * float64(w.replicas)
			freedMem := (row.Now.MemoryRequest - row.Recommended.MemoryRequest) * float64(w.replicas)
			if math.Abs(row.FreedCPU-freedCPU) > 1e-9 || math.Abs(row.FreedMemory-freedMem) > 1 {
				t.Errorf("%s: %s: frees %.4f cores, %.0f bytes; want %.4f and %.0f", check.source, w.name, row.FreedCPU, row.FreedMemory, freedCPU, freedMem)
			}
		}
		// The busy sidecar works harder than the quiet ones, and the
		// sources see it.
		if w.name == "busy" {
			quiet := rowOf(t, fromProm, "deployment/quiet")
			if busy := rowOf(t, fromProm, "deployment/busy"); busy.ObservedCPU <= quiet.ObservedCPU {
				t.Errorf("prometheus: busy's p95 cpu %.4f is not above quiet's %.4f", busy.ObservedCPU, quiet.ObservedCPU)
			}
		}
	}

	// --apply: the recommendation as override annotations on the running
	// Pods; restart resizes them in place. The table is what a user sees.
	applied := inject(t, "size", "-n", ns, "--prometheus", prom.URL, "--window", sizeWindow.String(), "--min-samples", sizeSamples, "--apply")
	mustSucceed(t, applied, "size --apply")
	t.Logf("kubectl inject size -n %s --prometheus URL --window %s --apply:\n%s%s", ns, sizeWindow, applied.stdout, applied.stderr)
	stopLoads()
	wanted := map[string]corev1.ResourceList{}
	for _, p := range fleet {
		got, err := admin(t).CoreV1().Pods(ns).Get(ctx, p.pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ann := got.Annotations
		cpu, mem := ann["sidecar.kinject.dev/cpu-request"], ann["sidecar.kinject.dev/memory-request"]
		if cpu == "" || mem == "" || ann["sidecar.kinject.dev/memory-limit"] == "" {
			t.Fatalf("pod %s: --apply wrote no override annotations: %v", p.pod.Name, ann)
		}
		wanted[p.pod.Name] = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	plan := inject(t, "restart", "-n", ns, "--dry-run")
	if !strings.Contains(plan.stdout+plan.stderr, "resized within their QoS class") {
		t.Errorf("restart's plan does not resize in place:\n%s%s", plan.stdout, plan.stderr)
	}
	mustSucceed(t, inject(t, "restart", "-n", ns), "restart")
	if r := inject(t, "status", "-n", ns, "--check"); r.code != 0 {
		t.Errorf("status --check after the resize: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var reservedBefore, reservedAfter [2]int64
	for _, p := range fleet {
		after, err := admin(t).CoreV1().Pods(ns).Get(ctx, p.pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s after restart: %v (it must be resized, not created again)", p.pod.Name, err)
		}
		if after.UID != p.pod.UID {
			t.Errorf("pod %s was created again", p.pod.Name)
		}
		for _, name := range []string{"app", "envoy"} {
			was, now := containerStatus(t, p.pod, name), containerStatus(t, *after, name)
			if now.ContainerID != was.ContainerID || now.RestartCount != was.RestartCount {
				t.Errorf("pod %s: container %s restarted: %s (%d restarts), was %s (%d)", p.pod.Name, name, now.ContainerID, now.RestartCount, was.ContainerID, was.RestartCount)
			}
		}
		proxy := containerStatus(t, *after, "envoy")
		if proxy.Resources == nil {
			t.Fatalf("pod %s: the kubelet reports no resources of the sidecar", p.pod.Name)
		}
		want := wanted[p.pod.Name]
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			got, w := proxy.Resources.Requests[r], want[r]
			if got.Cmp(w) != 0 {
				t.Errorf("pod %s: the kubelet runs the sidecar with %s request %s, want %s (the annotation)", p.pod.Name, r, got.String(), w.String())
			}
		}
		before, _ := sidecar(p.pod)
		reservedBefore[0] += before.Resources.Requests.Cpu().MilliValue()
		reservedBefore[1] += before.Resources.Requests.Memory().Value()
		reservedAfter[0] += proxy.Resources.Requests.Cpu().MilliValue()
		reservedAfter[1] += proxy.Resources.Requests.Memory().Value()
	}
	t.Logf("the fleet's sidecars reserved %dm CPU and %s before, %dm and %s after: %dm and %s freed",
		reservedBefore[0], mib(reservedBefore[1]), reservedAfter[0], mib(reservedAfter[1]),
		reservedBefore[0]-reservedAfter[0], mib(reservedBefore[1]-reservedAfter[1]))
	if reservedAfter[0] >= reservedBefore[0] {
		t.Errorf("the resize freed no CPU: %dm before, %dm after", reservedBefore[0], reservedAfter[0])
	}
}

func sizeJSON(t *testing.T, r command) sizeList {
	t.Helper()
	mustSucceed(t, r, "size")
	var l sizeList
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Kind != "SidecarSizeList" {
		t.Fatalf("size -o json: %v (kind %q)\n%s", err, l.Kind, r.stdout)
	}
	return l
}

func rowOf(t *testing.T, l sizeList, workload string) sizedRow {
	t.Helper()
	for _, r := range l.Items {
		if r.Workload == workload && r.Container == "envoy" {
			return r
		}
	}
	t.Fatalf("no row of %s (envoy) in %+v", workload, l.Items)
	return sizedRow{}
}

func podsOfWorkload(fleet []*sizedPod, name string) []*sizedPod {
	var out []*sizedPod
	for _, p := range fleet {
		if p.workload == name {
			out = append(out, p)
		}
	}
	return out
}

// cgroupRates is each Pod's sidecar CPU (cores) over a window of span
// ending at first, then every step up to last: what a source reporting
// a rate over span every step says, worked out from the kernel's counter.
func cgroupRates(t *testing.T, pods []*sizedPod, first, last time.Time, step, span time.Duration) []float64 {
	t.Helper()
	var out []float64
	for _, p := range pods {
		for end := first; !end.After(last); end = end.Add(step) {
			v, err := p.sampler.cpuBetween(end.Add(-span), end)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

// cgroupPeak is the highest working set of the Pods' sidecars sampled
// between from and to.
func cgroupPeak(pods []*sizedPod, from, to time.Time) float64 {
	peak := 0.0
	for _, p := range pods {
		p.sampler.mu.Lock()
		for _, s := range p.sampler.samples {
			if !s.Time.Before(from) && !s.Time.After(to) {
				peak = max(peak, float64(s.Memory))
			}
		}
		p.sampler.mu.Unlock()
	}
	return peak
}

// nearestRank is the p-quantile of values by the nearest-rank method,
// written apart from the code under test.
func nearestRank(values []float64, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, i)]
}
