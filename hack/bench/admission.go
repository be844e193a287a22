package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// The sides of the admission part: Pods created without any policy, the
// same Pods already injected (by the core, as the policy would) without
// any policy, and Pods created with the policy installed.
const (
	sideOff   = "off"
	sideCtl   = "pre-injected"
	sideFloor = "constant"
	sideOn    = "on"
	// sideBaseline is the policy of -admission-baseline: another version
	// of the same policy, measured in the same rounds as this one.
	sideBaseline = "baseline"
)

// admissionRun is one timed creation of the Pods.
type admissionRun struct {
	Round    int
	Side     string
	Wall     time.Duration
	CPU      float64 // the API server's CPU seconds over the run (process_cpu_seconds_total)
	Posts    int     // POST pods the API server counted (apiserver_request_total)
	Injected int     // Pods stored with the status annotation and the envoy container
}

// admissionResult is what part 6 measured.
type admissionResult struct {
	Pods, Workers, Rounds      int
	Runs                       []admissionRun
	Warmup                     int
	Activation                 []time.Duration // policy applied -> first injected dry-run
	Latency                    []latencyRow
	Families                   []metricFamily
	CEL                        *celReport
	PolicyBytes                int
	PodBytes, InjectedPodBytes int    // JSON of the bench Pod, before and after injection
	Baseline                   string // the -admission-baseline file, when one ran
}

// walls is the wall times of the runs of side, in order.
func (r *admissionResult) walls(side string) []time.Duration {
	var out []time.Duration
	for _, x := range r.Runs {
		if x.Side == side {
			out = append(out, x.Wall)
		}
	}
	return out
}

// medianOf is the median of xs (the mean of the middle two for an even
// count), 0 for none; xs is left as it was.
func medianOf[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
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

// admission is part 6: the policy of kubectl inject policy on a
// throw-away API server, Pods created without it, pre-injected and with it
// in interleaved rounds, the API server's admission latency metrics, and
// the CEL cost of the policy's expressions.
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
	floorObjs, err := floorPolicy(preInjected)
	if err != nil {
		return err
	}
	hook, err := startWebhook(preInjected)
	if err != nil {
		return err
	}
	defer hook.Stop()
	hookObjs, err := hook.objects()
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

	c, cfg, cs, err := startCluster("admission", "--disable-admission-plugins=ServiceAccount")
	if err != nil {
		return err
	}
	defer c.Stop()
	// The probes run in default.
	if err := prepareNamespace(context.Background(), cs, "default"); err != nil {
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
	ctx := context.Background()

	// installed is the side whose policy is in the cluster: sideOn (the
	// compiled policy), sideFloor (the constant one) or "" (none).
	installed := ""
	policyObjs := map[string][][]byte{sideOn: objs, sideFloor: floorObjs, sideWebhook: hookObjs}
	if o.admissionBaseline != "" {
		if policyObjs[sideBaseline], err = readPolicyFile(o.admissionBaseline); err != nil {
			return err
		}
		res.Baseline = o.admissionBaseline
	}
	apply := func(list [][]byte, del bool) error {
		for i := range list {
			data := list[i]
			if del {
				data = list[len(list)-1-i] // bindings first
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(data); err != nil {
				return err
			}
			r := dc.Resource(policyGVR(u.GetKind()))
			if del {
				if err := r.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("delete %s/%s: %w", u.GetKind(), u.GetName(), err)
				}
				continue
			}
			if _, err := r.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: admission.FieldManager, Force: true}); err != nil {
				return fmt.Errorf("apply %s/%s: %w", u.GetKind(), u.GetName(), err)
			}
		}
		return nil
	}
	setPolicy := func(want string) error {
		if installed == want {
			return nil
		}
		if installed != "" {
			start := time.Now()
			if err := apply(policyObjs[installed], true); err != nil {
				return err
			}
			if err := waitSide(ctx, probe, warned, installed, false); err != nil {
				return err
			}
			logf("admission: %s policy deleted after %s", installed, time.Since(start).Round(10*time.Millisecond))
			installed = ""
		}
		if want == "" {
			return nil
		}
		start := time.Now()
		if err := apply(policyObjs[want], false); err != nil {
			return err
		}
		if err := waitSide(ctx, probe, warned, want, true); err != nil {
			return err
		}
		if want == sideOn {
			res.Activation = append(res.Activation, time.Since(start))
		}
		installed = want
		logf("admission: %s policy active after %s", want, time.Since(start).Round(10*time.Millisecond))
		return nil
	}

	// Warm-up, untimed: the first requests of a fresh API server are dearer.
	if cpuSeconds(mustMetrics(ctx, cs)) < 0 {
		logf("admission: the API server reports no process_cpu_seconds_total: no CPU per Pod")
	}
	if _, err := createPods(ctx, cs, "adm-warmup", benchPod("", ""), res.Warmup, o.admissionWorkers); err != nil {
		return err
	}
	totals := map[string]map[string]histogram{sideOff: {}, sideCtl: {}, sideFloor: {}, sideWebhook: {}, sideOn: {}, sideBaseline: {}}
	sides := []string{sideOff, sideOn, sideWebhook, sideFloor, sideCtl}
	if res.Baseline != "" {
		sides = []string{sideOff, sideOn, sideBaseline, sideWebhook, sideFloor, sideCtl}
	}
	for r := 0; r < o.admissionRounds; r++ {
		// ABBA order: drift over the run hits every side alike.
		order := append([]string(nil), sides...)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, side := range order {
			policy := ""
			if policyObjs[side] != nil {
				policy = side
			}
			if err := setPolicy(policy); err != nil {
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
			run := admissionRun{Round: r, Side: side, Wall: wall, CPU: cpuSeconds(after) - cpuSeconds(before)}
			reqs, err := requestDelta(before, after)
			if err != nil {
				return err
			}
			run.Posts = reqs.Calls[call{Verb: "POST", Resource: "pods"}]
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
				return fmt.Errorf("admission round %d (%s): %d of %d Pods in %s carry the sidecar and %s, want %d", r, side, run.Injected, o.admissionPods, ns, naming.StatusAnnotation, want)
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
	return setPolicy("")
}

// readPolicyFile reads the objects of a policy file (YAML documents) as
// JSON, in the file's order.
func readPolicyFile(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for i, doc := range splitDocs(data) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		out = append(out, j)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no policy objects", path)
	}
	return out, nil
}

// createPods creates namespace ns and n copies of tmpl, web-0..web-(n-1),
// in it with the given number of workers, and returns the wall time of the
// Pods' creation (not the namespace's).
func createPods(ctx context.Context, cs kubernetes.Interface, ns string, tmpl *corev1.Pod, n, workers int) (time.Duration, error) {
	if err := createNamespace(ctx, cs, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	start := time.Now()
	err := parallel(n, workers, func(i int) error {
		p := tmpl.DeepCopy()
		p.Namespace, p.Name = ns, fmt.Sprintf("web-%d", i)
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s/%s: %w", ns, p.Name, err)
		}
		return nil
	})
	return time.Since(start), err
}

// countInjectedPods counts the Pods of ns that carry the status annotation
// and the envoy sidecar (an init container when native).
func countInjectedPods(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range list.Items {
		if _, ok := p.Annotations[naming.StatusAnnotation]; ok && hasEnvoy(p.Spec.InitContainers, p.Spec.Containers) {
			n++
		}
	}
	return n, nil
}
