package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// The sides of the admission part: Pods created without any policy, the
// same Pods already injected (by the core, as the policy would) without
// any policy, and Pods created with the policy installed.
const (
	sideOff = "off"
	sideCtl = "pre-injected"
	sideOn  = "on"
)

// admissionRun is one timed creation of the Pods.
type admissionRun struct {
	Round    int
	Side     string
	Wall     time.Duration
	Posts    int // POST pods the API server counted (apiserver_request_total)
	Injected int // Pods stored with the status annotation and the envoy container
}

type admissionResult struct {
	Pods, Workers, Rounds      int
	Runs                       []admissionRun
	Warmup                     int
	Activation                 []time.Duration // policy applied -> first injected dry-run
	Latency                    []latencyRow
	Families                   []metricFamily
	CEL                        *celReport
	PolicyBytes                int
	PodBytes, InjectedPodBytes int // JSON of the bench Pod, before and after injection
}

func (r *admissionResult) walls(side string) []time.Duration {
	var out []time.Duration
	for _, x := range r.Runs {
		if x.Side == side {
			out = append(out, x.Wall)
		}
	}
	return out
}

// medianDuration is the median of ds (the mean of the middle two for an
// even count).
func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}

// policyResources are the resources of the compiled policy's kinds.
var policyResources = map[string]string{
	admission.KindMutatingPolicy:          "mutatingadmissionpolicies",
	admission.KindMutatingPolicyBinding:   "mutatingadmissionpolicybindings",
	admission.KindValidatingPolicy:        "validatingadmissionpolicies",
	admission.KindValidatingPolicyBinding: "validatingadmissionpolicybindings",
}

func policyGVR(kind string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: policyResources[kind]}
}

// injectedPod is the bench Pod injected by the core (kubectl inject
// --local), which is what the policy stores (test/admission checks that
// the two agree).
func injectedPod(in *inject.Injector) (*corev1.Pod, error) {
	src, err := yaml.Marshal(benchPod("", "web"))
	if err != nil {
		return nil, err
	}
	out, entries := in.ProcessText(inject.OpInject, src, 0)
	if len(entries) != 1 || entries[0].Action != inject.Injected {
		return nil, fmt.Errorf("the core did not inject the bench Pod: %v", entries)
	}
	var p corev1.Pod
	if err := yaml.UnmarshalStrict(out, &p); err != nil {
		return nil, fmt.Errorf("the injected bench Pod: %w\n%s", err, out)
	}
	return &p, nil
}

// benchPod is a Pod as a Deployment's ReplicaSet creates it: labels, one
// nginx container with a port.
func benchPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: ns,
			Labels:    map[string]string{"app": "web", "app.kubernetes.io/name": "web", "pod-template-hash": "5d8f9c7b6d"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}},
			}},
		},
	}
}

func (e *env) admission() error {
	o := e.opts
	res := &admissionResult{Pods: o.admissionPods, Workers: o.admissionWorkers, Rounds: o.admissionRounds, Warmup: min(100, o.admissionPods)}
	e.report.admission = res

	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		return err
	}
	pol, err := admission.Compile(in, "")
	if err != nil {
		return err
	}
	policyYAML, err := pol.YAML()
	if err != nil {
		return err
	}
	res.PolicyBytes = len(policyYAML)
	objs, err := pol.Objects()
	if err != nil {
		return err
	}
	preInjected, err := injectedPod(in)
	if err != nil {
		return err
	}
	if b, err := json.Marshal(benchPod("", "web")); err == nil {
		res.PodBytes = len(b)
	}
	if b, err := json.Marshal(preInjected); err == nil {
		res.InjectedPodBytes = len(b)
	}

	// CEL cost first: compiling celcost must not overlap the timings.
	if res.CEL, err = e.celCost(policyYAML); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t0 := time.Now()
	c, err := cluster.Start(ctx, "--disable-admission-plugins=ServiceAccount")
	cancel()
	if err != nil {
		return fmt.Errorf("start the test cluster: %w", err)
	}
	defer c.Stop()
	logf("admission: cluster up in %s at %s", time.Since(t0).Round(100*time.Millisecond), c.URL)
	cfg := c.AdminConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	warned := &warnings{}
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.WarningHandler = warned
	probe, err := kubernetes.NewForConfig(probeCfg)
	if err != nil {
		return err
	}
	ctx = context.Background()

	installed := false
	setPolicy := func(want bool) error {
		if installed == want {
			return nil
		}
		start := time.Now()
		if want {
			for _, data := range objs {
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(data); err != nil {
					return err
				}
				if _, err := dc.Resource(policyGVR(u.GetKind())).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: admission.FieldManager, Force: true}); err != nil {
					return fmt.Errorf("apply %s/%s: %w", u.GetKind(), u.GetName(), err)
				}
			}
		} else {
			for i := len(objs) - 1; i >= 0; i-- {
				u := &unstructured.Unstructured{}
				if err := u.UnmarshalJSON(objs[i]); err != nil {
					return err
				}
				if err := dc.Resource(policyGVR(u.GetKind())).Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("delete %s/%s: %w", u.GetKind(), u.GetName(), err)
				}
			}
		}
		if err := waitPolicy(ctx, probe, warned, want); err != nil {
			return err
		}
		if want {
			res.Activation = append(res.Activation, time.Since(start))
		}
		installed = want
		logf("admission: policy %s, active=%v after %s", map[bool]string{true: "applied", false: "deleted"}[want], want, time.Since(start).Round(10*time.Millisecond))
		return nil
	}

	// Warm-up, untimed: the first requests of a fresh API server are dearer.
	if _, err := createPods(ctx, cs, "adm-warmup", benchPod("", ""), res.Warmup, o.admissionWorkers); err != nil {
		return err
	}
	totals := map[string]map[string]histogram{sideOff: {}, sideCtl: {}, sideOn: {}}
	for r := 0; r < o.admissionRounds; r++ {
		// ABBA order: drift over the run hits every side alike.
		order := []string{sideOff, sideOn, sideCtl}
		if r%2 == 1 {
			order = []string{sideCtl, sideOn, sideOff}
		}
		for _, side := range order {
			withPolicy := side == sideOn
			if err := setPolicy(withPolicy); err != nil {
				return err
			}
			tmpl := benchPod("", "")
			if side == sideCtl {
				tmpl = preInjected
			}
			ns := fmt.Sprintf("adm-%s-%d", side, r)
			before, err := metricsText(ctx, cs)
			if err != nil {
				return err
			}
			wall, err := createPods(ctx, cs, ns, tmpl, o.admissionPods, o.admissionWorkers)
			if err != nil {
				return err
			}
			after, err := metricsText(ctx, cs)
			if err != nil {
				return err
			}
			run := admissionRun{Round: r, Side: side, Wall: wall}
			run.Posts = counterDelta(before, after, "apiserver_request_total", `resource="pods"`, `verb="POST"`, `subresource=""`)
			for k, h := range histogramDeltas(before, after, keepLatency) {
				t := totals[side][k]
				t.sum += h.sum
				t.count += h.count
				totals[side][k] = t
			}
			if run.Injected, err = countInjectedPods(ctx, cs, ns); err != nil {
				return err
			}
			want := 0
			if side != sideOff {
				want = o.admissionPods
			}
			if run.Injected != want {
				return fmt.Errorf("admission round %d (%s): %d of %d Pods in %s carry the sidecar and %s, want %d", r, side, run.Injected, o.admissionPods, ns, inject.StatusAnnotation, want)
			}
			logf("admission round %d, %s: %d Pods in %s (%.0f/s), %d POST pods, %d injected", r, side, o.admissionPods, secs(wall), float64(o.admissionPods)/wall.Seconds(), run.Posts, run.Injected)
			res.Runs = append(res.Runs, run)
			zero := int64(0)
			if err := cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
				return fmt.Errorf("delete the Pods of %s: %w", ns, err)
			}
		}
	}
	res.Latency = latencyRows(totals)
	final, err := metricsText(ctx, cs)
	if err != nil {
		return err
	}
	res.Families = families(final)
	return setPolicy(false)
}

// createPods creates namespace ns and n copies of tmpl, web-0..web-(n-1),
// in it with the given number of workers, and returns the wall time of the
// Pods' creation (not the namespace's).
func createPods(ctx context.Context, cs kubernetes.Interface, ns string, tmpl *corev1.Pod, n, workers int) (time.Duration, error) {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p := tmpl.DeepCopy()
				p.Namespace, p.Name = ns, fmt.Sprintf("web-%d", i)
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create %s/%s: %w", ns, p.Name, err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	d := time.Since(start)
	close(errs)
	return d, <-errs // nil when the channel is empty
}

// countInjectedPods counts the Pods of ns that carry the status annotation
// and the envoy container.
func countInjectedPods(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range list.Items {
		if _, ok := p.Annotations[inject.StatusAnnotation]; !ok {
			continue
		}
		for _, c := range p.Spec.Containers {
			if c.Name == "envoy" {
				n++
				break
			}
		}
	}
	return n, nil
}

// warnings counts the API server's warnings that the conflicts policy
// (the ValidatingAdmissionPolicy) returns.
type warnings struct {
	mu sync.Mutex
	n  int
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	if strings.Contains(text, "sidecar not injected by") {
		w.mu.Lock()
		w.n++
		w.mu.Unlock()
	}
}

func (w *warnings) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.n
	w.n = 0
	return n
}

// waitPolicy waits until both policies run (active) or neither does, as
// test/admission does, with server-side dry-run creates: the bench Pod
// comes back injected once the mutating policy runs, and a Pod with a
// container of the sidecar's name draws a warning once the validating
// policy runs. cs must report warnings to w.
func waitPolicy(ctx context.Context, cs kubernetes.Interface, w *warnings, active bool) error {
	conflicting := benchPod("default", "probe-conflict")
	conflicting.Spec.Containers = append(conflicting.Spec.Containers, corev1.Container{Name: "envoy", Image: "busybox"})
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for {
		got, err := cs.CoreV1().Pods("default").Create(ctx, benchPod("default", "probe"), dry)
		if err == nil {
			_, injected := got.Annotations[inject.StatusAnnotation]
			w.take()
			if _, err = cs.CoreV1().Pods("default").Create(ctx, conflicting, dry); err == nil {
				warned := w.take() > 0
				if injected == active && warned == active {
					return nil
				}
			}
		}
		lastErr = err
		if time.Now().After(deadline) {
			return fmt.Errorf("the policies did not become active=%v within 60s (last error: %v)", active, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func metricsText(ctx context.Context, cs kubernetes.Interface) (string, error) {
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read /metrics: %w", err)
	}
	return string(body), nil
}

// metricLine splits a sample line into name, labels (without braces) and
// value.
func metricLine(line string) (name, labels string, v float64, ok bool) {
	if line == "" || line[0] == '#' {
		return "", "", 0, false
	}
	sp := strings.LastIndexByte(line, ' ')
	if sp < 0 {
		return "", "", 0, false
	}
	v, err := strconv.ParseFloat(line[sp+1:], 64)
	if err != nil {
		return "", "", 0, false
	}
	head := line[:sp]
	if i := strings.IndexByte(head, '{'); i >= 0 {
		return head[:i], strings.TrimSuffix(head[i+1:], "}"), v, true
	}
	return head, "", v, true
}

func eachSample(text string, f func(name, labels string, v float64)) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if name, labels, v, ok := metricLine(sc.Text()); ok {
			f(name, labels, v)
		}
	}
}

// counterDelta sums the counter name over series whose labels contain
// every want, after minus before.
func counterDelta(before, after, name string, want ...string) int {
	sum := func(text string) float64 {
		var s float64
		eachSample(text, func(n, labels string, v float64) {
			if n != name {
				return
			}
			for _, w := range want {
				if !strings.Contains(labels, w) {
					return
				}
			}
			s += v
		})
		return s
	}
	return int(sum(after) - sum(before))
}

type histogram struct{ sum, count float64 }

// keepLatency selects the latency histograms the report shows: the API
// server's POST pods latency, the admission steps and controllers at
// CREATE, and everything of the admission policies.
func keepLatency(name, labels string) bool {
	switch {
	case name == "apiserver_request_duration_seconds":
		return strings.Contains(labels, `resource="pods"`) && strings.Contains(labels, `verb="POST"`) && strings.Contains(labels, `subresource=""`)
	case name == "apiserver_admission_step_admission_duration_seconds",
		name == "apiserver_admission_controller_admission_duration_seconds":
		return strings.Contains(labels, `operation="CREATE"`)
	case strings.HasPrefix(name, "apiserver_mutating_admission_policy_"),
		strings.HasPrefix(name, "apiserver_validating_admission_policy_"),
		strings.HasPrefix(name, "apiserver_admission_match_condition_"),
		strings.HasPrefix(name, "apiserver_cel_"):
		return true
	}
	return false
}

// histogramDeltas returns, for every histogram series keep selects,
// after minus before of its _sum and _count, keyed "name{labels}".
func histogramDeltas(before, after string, keep func(name, labels string) bool) map[string]histogram {
	read := func(text string) map[string]histogram {
		m := map[string]histogram{}
		eachSample(text, func(name, labels string, v float64) {
			var base string
			var isSum bool
			switch {
			case strings.HasSuffix(name, "_sum"):
				base, isSum = strings.TrimSuffix(name, "_sum"), true
			case strings.HasSuffix(name, "_count"):
				base = strings.TrimSuffix(name, "_count")
			default:
				return
			}
			if !keep(base, labels) {
				return
			}
			k := base + "{" + labels + "}"
			h := m[k]
			if isSum {
				h.sum = v
			} else {
				h.count = v
			}
			m[k] = h
		})
		return m
	}
	b, a := read(before), read(after)
	out := map[string]histogram{}
	for k, h := range a {
		d := histogram{sum: h.sum - b[k].sum, count: h.count - b[k].count}
		if d.count > 0 {
			out[k] = d
		}
	}
	return out
}

type latencyRow struct {
	Series string
	Sides  map[string]histogram // side -> totals; absent when never observed
}

// mean is the mean observation of the side, and whether there is one.
func (l latencyRow) mean(side string) (float64, bool) {
	h, ok := l.Sides[side]
	if !ok || h.count == 0 {
		return 0, false
	}
	return h.sum / h.count, true
}

// latencyRows merges the sides' totals by series, API request latency
// first, then admission steps, controllers and policies.
func latencyRows(totals map[string]map[string]histogram) []latencyRow {
	keys := map[string]bool{}
	for _, m := range totals {
		for k := range m {
			keys[k] = true
		}
	}
	var rows []latencyRow
	for k := range keys {
		row := latencyRow{Series: k, Sides: map[string]histogram{}}
		for side, m := range totals {
			if h, ok := m[k]; ok {
				row.Sides[side] = h
			}
		}
		rows = append(rows, row)
	}
	rank := func(s string) int {
		for i, p := range []string{"apiserver_request_duration_seconds", "apiserver_admission_step_", "apiserver_admission_controller_", "apiserver_mutating_", "apiserver_validating_", "apiserver_admission_match_", "apiserver_cel_"} {
			if strings.HasPrefix(s, p) {
				return i
			}
		}
		return 99
	}
	sort.Slice(rows, func(a, b int) bool {
		if ra, rb := rank(rows[a].Series), rank(rows[b].Series); ra != rb {
			return ra < rb
		}
		return rows[a].Series < rows[b].Series
	})
	return rows
}

// shortSeries drops the labels that do not tell the rows apart.
func shortSeries(s string) string {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return s
	}
	name, labels := s[:i], strings.TrimSuffix(s[i+1:], "}")
	var keep []string
	for _, l := range splitLabels(labels) {
		k := l[:strings.IndexByte(l, '=')]
		switch k {
		case "name", "type", "policy", "kind", "error_type", "rejected", "verb", "resource":
			keep = append(keep, l)
		}
	}
	return name + "{" + strings.Join(keep, ",") + "}"
}

// splitLabels splits `a="x",b="y,z"` at the commas between labels.
func splitLabels(s string) []string {
	var out []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

type metricFamily struct {
	Name    string
	Samples int
	Total   float64 // sum of the _count (histograms) or of the values
}

// families lists the metric families whose name mentions CEL or admission
// policies, with their number of series and total count: which of them the
// API server exposes and fills.
func families(text string) []metricFamily {
	m := map[string]*metricFamily{}
	eachSample(text, func(name, labels string, v float64) {
		base := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suf)
		}
		if !(strings.Contains(base, "_cel_") || strings.Contains(base, "admission_policy") || strings.Contains(base, "match_condition")) {
			return
		}
		f := m[base]
		if f == nil {
			f = &metricFamily{Name: base}
			m[base] = f
		}
		switch {
		case strings.HasSuffix(name, "_bucket"), strings.HasSuffix(name, "_sum"):
		case strings.HasSuffix(name, "_count") || base == name:
			f.Samples++
			f.Total += v
		}
	})
	var out []metricFamily
	for _, f := range m {
		out = append(out, *f)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// celReport mirrors the JSON of hack/apiserver/celcost.
type celReport struct {
	CompatibilityVersion string `json:"compatibilityVersion"`
	PerCallLimit         int64  `json:"perCallLimit"`
	RuntimeBudget        int64  `json:"runtimeCELCostBudget"`
	MatchConditionBudget int64  `json:"runtimeCELCostBudgetMatchConditions"`
	TypedMethod          string `json:"typedMethod"`
	Pod                  string `json:"pod"`
	Expressions          []struct {
		Policy  string      `json:"policy"`
		Kind    string      `json:"kind"`
		Field   string      `json:"field"`
		Length  int         `json:"length"`
		Typed   celEstimate `json:"typed"`
		Dynamic celEstimate `json:"dynamic"`
		Runtime *struct {
			Cost   int64  `json:"cost"`
			Result string `json:"result"`
			Error  string `json:"error"`
		} `json:"runtime"`
	} `json:"expressions"`
	Totals []struct {
		Policy string `json:"policy"`
		What   string `json:"what"`
		Cost   int64  `json:"cost"`
		Budget int64  `json:"budget"`
	} `json:"totals"`
	Elapsed time.Duration `json:"-"`
}

// maxRuntime is the dearest evaluation of one admission of the bench Pod.
func (c *celReport) maxRuntime() int64 {
	var m int64
	for _, x := range c.Totals {
		m = max(m, x.Cost)
	}
	return m
}

type celEstimate struct {
	Max       uint64 `json:"max"`
	Unbounded bool   `json:"unbounded"`
	Error     string `json:"error"`
}

func (c celEstimate) String() string {
	switch {
	case c.Error != "":
		return "error"
	case c.Unbounded:
		return "unbounded"
	}
	return commas64(c.Max)
}

func (c celEstimate) share(limit int64) string {
	switch {
	case c.Error != "":
		return "-"
	case c.Unbounded:
		return "unbounded"
	}
	return pct(float64(c.Max) / float64(limit))
}

// pct formats a fraction as a percentage with enough digits to be read.
func pct(f float64) string {
	p := 100 * f
	switch {
	case p >= 100:
		return fmt.Sprintf("%s%%", commas64(uint64(p+0.5)))
	case p >= 1:
		return fmt.Sprintf("%.1f%%", p)
	case p >= 0.01:
		return fmt.Sprintf("%.2f%%", p)
	default:
		return fmt.Sprintf("%.4f%%", p)
	}
}

func commas64(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// celCost runs hack/apiserver/celcost (a package of the nested module that
// builds kube-apiserver, so that it compiles with the API server's own CEL
// environment) on the policy, with the bench Pod for the runtime costs.
func (e *env) celCost(policyYAML []byte) (*celReport, error) {
	policyFile := filepath.Join(e.tmp, "admission-policy.yaml")
	if err := os.WriteFile(policyFile, policyYAML, 0o644); err != nil {
		return nil, err
	}
	podYAML, err := yaml.Marshal(benchPod("bench", "web-0"))
	if err != nil {
		return nil, err
	}
	podFile := filepath.Join(e.tmp, "admission-pod.yaml")
	if err := os.WriteFile(podFile, podYAML, 0o644); err != nil {
		return nil, err
	}
	f, err := os.Open(policyFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// -trimpath and CGO_ENABLED=0 as hack/build-apiserver.sh: the packages
	// kube-apiserver's build compiled come from the build cache.
	cmd := exec.Command("go", "run", "-trimpath", "./celcost", "-json", "-pod", podFile)
	cmd.Dir = filepath.Join("hack", "apiserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdin = f
	var stdout bytes.Buffer
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	logf("admission: go run ./celcost in hack/apiserver (the first build compiles the API server's packages)")
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("celcost: %v\n%s", err, stderr.String())
	}
	var rep celReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("celcost output: %w", err)
	}
	rep.Elapsed = time.Since(start)
	logf("admission: celcost: %d expressions in %s", len(rep.Expressions), rep.Elapsed.Round(100*time.Millisecond))
	return &rep, nil
}
