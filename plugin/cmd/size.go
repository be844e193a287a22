package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/sizing"
)

const sizeExample = `  # Recommend the sidecar's requests for every injected workload of the namespace, from metrics-server (samples for 10 min)
  kubectl inject size --watch 10m

  # From a week of Prometheus (cAdvisor's series), across all namespaces
  kubectl inject size -A --prometheus http://prometheus.monitoring:9090 --window 7d

  # Write the recommendation as the workload's override annotations, then resize its Pods in place
  kubectl inject size deploy/web --prometheus http://prometheus:9090 --apply
  kubectl inject restart deploy/web`

// SizeOptions are the flags of kubectl inject size.
type SizeOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	Flags         config.Flags
	AllNamespaces bool
	// Prometheus is the base URL of a Prometheus server; Window the range
	// read from it. Without it the metrics API is sampled every Interval
	// for Watch.
	Prometheus              string
	Window, Watch, Interval time.Duration
	Options                 sizing.Options
	MaxCPU, MaxMemory       string
	Apply                   bool
	FieldManager            string
}

// NewCmdSize returns the size subcommand.
func NewCmdSize(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SizeOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: config.NewFlags(), Options: sizing.DefaultOptions,
		Window: 7 * 24 * time.Hour, Watch: 5 * time.Minute, Interval: 15 * time.Second, FieldManager: DefaultFieldManager}
	c := &cobra.Command{
		Use:   "size [TYPE[/NAME]...] [flags]",
		Short: "Recommend the sidecar's requests from what it uses, and write them as override annotations (--apply)",
		Long: `Read what each injected workload's sidecars use (CPU and memory, per container
of the profile's template) and recommend their requests: the CPU a percentile
of the samples covers (p95), the memory peak with headroom (15%), and a memory
limit that keeps the template's limit-to-request ratio. Never below the memory
peak seen, never above --max-cpu and --max-memory; a change smaller than
--threshold is not made.

The samples come from Prometheus (--prometheus URL: cAdvisor's
container_cpu_usage_seconds_total and container_memory_working_set_bytes, as
kube-prometheus scrapes them, over --window), or else from the metrics API
(metrics-server), sampled for --watch: a short window, which the table says.

A workload with too few samples, no injected sidecar, or a template that
declares no resource parameters is reported with its reason, never sized.
--apply writes the recommendation as override annotations (the template's
declared parameters: sidecar.kinject.dev/cpu-request, memory-request,
memory-limit) on the running Pods injected at admission, not on the pod
template, so nothing rolls; kubectl inject restart then resizes those Pods
in place. Pods created later get the pod template's values: put the
annotations there (in git) to keep them. A workload whose pod template
carries the sidecar (kubectl inject, inject-fn) is not applied
(in_pod_template): its annotations belong in the template.`,
		Example:       sizeExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, args []string) error {
			o.Flags.Complete(c.Flags())
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(c.Context(), args)
		},
	}
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Size in all namespaces")
	f.StringVar(&o.Prometheus, "prometheus", "", "Base URL of a Prometheus server that scrapes the kubelets' cAdvisor (default: the metrics API)")
	f.DurationVar(&o.Window, "window", o.Window, "With --prometheus: how far back to read")
	f.DurationVar(&o.Watch, "watch", o.Watch, "Without --prometheus: how long to sample the metrics API")
	f.DurationVar(&o.Interval, "interval", o.Interval, "Without --prometheus: how often to read the metrics API")
	f.Float64Var(&o.Options.CPUPercentile, "cpu-percentile", 95, "The percentile of the CPU samples the CPU request covers")
	f.Float64Var(&o.Options.MemoryHeadroom, "memory-headroom", 15, "Percent added to the memory peak for the memory request")
	f.IntVar(&o.Options.MinSamples, "min-samples", o.Options.MinSamples, "The fewest samples of a container to size it from")
	f.Float64Var(&o.Options.Threshold, "threshold", 10, "The smallest change made, in percent of what is requested now")
	f.StringVar(&o.MaxCPU, "max-cpu", "", "Never recommend more CPU than this (a quantity: 500m)")
	f.StringVar(&o.MaxMemory, "max-memory", "", "Never recommend more memory than this (a quantity: 256Mi), except the memory peak seen")
	f.BoolVar(&o.Apply, "apply", false, "Write each recommendation as the workload's override annotations")
	f.StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Field manager of the patches")
	f.StringVarP(&o.Flags.Output, "output", "o", "", "json or yaml (default: a table)")
	o.Flags.AddTemplateFlags(f)
	addStaticFlag(c, &o.Flags)
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("json", "yaml"))
	return c
}

// Validate checks the flags and arguments; it reports every problem.
func (o *SizeOptions) Validate(args []string) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch o.Flags.Output {
	case "", "json", "yaml":
	default:
		add("--output must be json or yaml, not %q", o.Flags.Output)
	}
	if p := o.Options.CPUPercentile; p <= 0 || p > 100 {
		add("--cpu-percentile must be above 0 and at most 100, not %v", p)
	}
	if o.Options.MemoryHeadroom < 0 || o.Options.Threshold < 0 {
		add("--memory-headroom and --threshold must not be negative")
	}
	if o.Options.MinSamples < 1 {
		add("--min-samples must be at least 1")
	}
	if o.Window <= 0 || o.Watch <= 0 || o.Interval <= 0 {
		add("--window, --watch and --interval must be positive")
	}
	for flag, v := range map[string]string{"--max-cpu": o.MaxCPU, "--max-memory": o.MaxMemory} {
		if v == "" {
			continue
		}
		if q, err := resource.ParseQuantity(v); err != nil || q.Sign() <= 0 {
			add("%s: %q is not a positive quantity", flag, v)
		}
	}
	if _, err := parseStatusArgs(args); err != nil {
		add("%s", strings.Replace(err.Error(), "kubectl inject status shows", "kubectl inject size sizes", 1))
	}
	errs = append(errs, o.Flags.ValidateTemplateFlags()...)
	return errors.Join(errs...)
}

// sized is one row of the output: a sidecar container of a workload.
type sized struct {
	Namespace string `json:"namespace"`
	Workload  string `json:"workload"`
	sizing.Recommendation
	// Window is how long the samples cover.
	Window string `json:"window"`
	// FreedCPU and FreedMemory are what the recommendation frees across
	// the workload's Pods (negative: adds), in cores and bytes.
	FreedCPU    float64 `json:"freedCPU"`
	FreedMemory float64 `json:"freedMemory"`
	// Annotations are the override annotations that carry the
	// recommendation (the template's declared parameters): what --apply
	// writes on the running Pods, and what to put in the pod template (in
	// git) to keep it for the Pods created later.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Applied says --apply wrote it.
	Applied bool `json:"applied,omitempty"`

	object     *unstructured.Unstructured
	parameters resourceParameters
	// pods are the names of the workload's injected Pods.
	pods map[string]bool
	// inTemplate: the workload's pod template carries the sidecar.
	inTemplate bool
}

// templateInjected reports whether the workload's pod template carries
// the profile's status record (the sidecar is part of the template).
func templateInjected(obj *unstructured.Unstructured, recordKey string) bool {
	for _, path := range [][]string{{"spec", "template", "metadata", "annotations"}, {"spec", "jobTemplate", "spec", "template", "metadata", "annotations"}} {
		if ann, _, _ := unstructured.NestedStringMap(obj.Object, path...); ann[recordKey] != "" {
			return true
		}
	}
	return false
}

// resourceParameters are the override annotations a template declares
// for one container's requests and memory limit ("" when not declared).
type resourceParameters struct{ cpuRequest, memoryRequest, memoryLimit string }

func parametersOf(in *inject.Injector, container string) resourceParameters {
	var p resourceParameters
	for _, param := range in.Template().Parameters {
		key := naming.ProfileAnnotation(in.Profile(), param.Annotation)
		switch param.Field {
		case "containers[" + container + "].resources.requests.cpu":
			p.cpuRequest = key
		case "containers[" + container + "].resources.requests.memory":
			p.memoryRequest = key
		case "containers[" + container + "].resources.limits.memory":
			p.memoryLimit = key
		}
	}
	return p
}

// Run samples, recommends, prints and, with --apply, writes.
func (o *SizeOptions) Run(ctx context.Context, args []string) error {
	o.Options.CPUPercentile /= 100
	o.Options.MemoryHeadroom /= 100
	o.Options.Threshold /= 100
	if o.MaxCPU != "" {
		q := resource.MustParse(o.MaxCPU)
		o.Options.MaxCPU = q.AsApproximateFloat64()
	}
	if o.MaxMemory != "" {
		q := resource.MustParse(o.MaxMemory)
		o.Options.MaxMemory = q.AsApproximateFloat64()
	}
	filter, _ := parseStatusArgs(args)
	namespace := ""
	var err error
	if !o.AllNamespaces {
		if namespace, _, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return fmt.Errorf("read kubeconfig namespace: %w", err)
		}
	}
	cfg, client, err := clusterClient(o.ConfigFlags)
	if err != nil {
		return err
	}
	warn := func(s string) { fmt.Fprintln(o.ErrOut, "Warning: "+s) }
	cur, err := readCurrent(ctx, &o.Flags, client, serverMetrics(o.ConfigFlags), clusterConfigMaps(o.ConfigFlags), "", false, false, warn)
	if err != nil {
		return err
	}
	in, err := config.NewInjector(cur.Template, cur.Settings, io.Discard)
	if err != nil {
		return err
	}
	lister := &StatusOptions{PageSize: 500}
	var objs []*unstructured.Unstructured
	for _, r := range statusResources {
		listed, err := lister.list(ctx, client, r.gvr, namespace)
		if err != nil {
			return err
		}
		objs = append(objs, listed...)
	}
	rows, podsByNS, containers := o.rows(in, fleet.Workloads(objs), filter)
	window := o.Window
	var got samples
	if o.Prometheus != "" {
		if len(podsByNS) > 0 {
			if got, err = samplePrometheus(ctx, o.Prometheus, o.Window, podsByNS, containers); err != nil {
				return err
			}
		}
	} else {
		window = o.Watch
		fmt.Fprintf(o.ErrOut, "Sampling the metrics API for %s, every %s: a short window; Prometheus (--prometheus) gives days\n", o.Watch, o.Interval)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		if len(podsByNS) > 0 {
			namespaces := slices.Sorted(maps.Keys(podsByNS))
			progress := func(string) {}
			if got, err = sampleMetricsAPI(ctx, cs.RESTClient(), namespaces, o.Watch, o.Interval, progress); err != nil {
				return err
			}
		}
	}
	for i := range rows {
		o.recommend(&rows[i], got, window)
	}
	if o.Apply {
		if err := o.apply(ctx, client, rows); err != nil {
			return err
		}
	}
	return o.print(rows)
}

// rows lists the sidecar containers of the selected workloads, and the
// Pods and containers to sample.
func (o *SizeOptions) rows(in *inject.Injector, workloads []fleet.Workload, filter statusFilter) ([]sized, map[string][]string, []string) {
	names := sidecarNames(in)
	var rows []sized
	pods := map[string][]string{}
	for _, w := range workloads {
		obj := w.Object
		kindRes := resourceOf(obj.GetKind())
		named := false
		if filter != nil {
			want, ok := filter[kindRes]
			if !ok || (len(want) > 0 && !want[obj.GetName()]) {
				continue
			}
			named = len(want) > 0
		}
		ref := strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
		var injected []*unstructured.Unstructured
		for _, p := range w.Pods {
			if p.GetAnnotations()[in.StatusAnnotation()] != "" {
				injected = append(injected, p)
			}
		}
		if len(injected) == 0 {
			if named {
				rows = append(rows, sized{Namespace: obj.GetNamespace(), Workload: ref, object: obj,
					Recommendation: sizing.Recommendation{Reason: reasonNoSidecar, Message: fmt.Sprintf("none of its %d Pods runs the sidecar of %s", len(w.Pods), naming.ProfileName(in.Profile()))}})
			}
			continue
		}
		own := map[string]bool{}
		for _, p := range injected {
			pods[obj.GetNamespace()] = append(pods[obj.GetNamespace()], p.GetName())
			own[p.GetName()] = true
		}
		for _, c := range names {
			r := sized{Namespace: obj.GetNamespace(), Workload: ref, object: obj, parameters: parametersOf(in, c), pods: own,
				inTemplate: templateInjected(obj, in.StatusAnnotation())}
			r.Container, r.Pods = c, len(injected)
			r.Now = resourcesOf(injected[0], c)
			r.Recommended = r.Now
			if r.parameters.cpuRequest == "" && r.parameters.memoryRequest == "" {
				r.Reason, r.Message = reasonNoParameters, fmt.Sprintf("the template declares no override annotation for containers[%s].resources.requests: nothing could be written", c)
			}
			rows = append(rows, r)
		}
	}
	return rows, pods, names
}

// sidecarNames are the template's containers and init containers.
func sidecarNames(in *inject.Injector) []string {
	t := in.Template()
	var names []string
	for _, c := range append(append([]*kyaml.Node(nil), t.InitContainers...), t.Containers...) {
		if name, err := kyaml.NewRNode(c).GetString("name"); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// resourcesOf reads a container's requests and memory limit from a Pod.
func resourcesOf(pod *unstructured.Unstructured, container string) sizing.Resources {
	var r sizing.Resources
	for _, field := range []string{"initContainers", "containers"} {
		list, _, _ := unstructured.NestedSlice(pod.Object, "spec", field)
		for _, item := range list {
			c, _ := item.(map[string]any)
			if c["name"] != container {
				continue
			}
			q := func(path ...string) float64 {
				s, _, _ := unstructured.NestedString(c, path...)
				v, err := resource.ParseQuantity(s)
				if err != nil {
					return 0
				}
				return v.AsApproximateFloat64()
			}
			r.CPURequest = q("resources", "requests", "cpu")
			r.MemoryRequest = q("resources", "requests", "memory")
			r.MemoryLimit = q("resources", "limits", "memory")
			r.CPULimit = q("resources", "limits", "cpu")
		}
	}
	return r
}

// recommend sizes one row from the samples of its workload's Pods.
func (o *SizeOptions) recommend(r *sized, got samples, window time.Duration) {
	r.Window = window.String()
	if r.Reason != "" {
		return
	}
	u := sizing.Usage{Container: r.Container}
	for k, s := range got {
		if k.namespace != r.Namespace || k.container != r.Container || !r.pods[k.pod] {
			continue
		}
		u.Pods++
		u.CPU = append(u.CPU, s.cpu...)
		u.Memory = append(u.Memory, s.memory...)
	}
	pods := r.Pods
	r.Recommendation = sizing.Recommend(u, r.Now, o.Options)
	r.Pods = pods
	r.FreedCPU, r.FreedMemory = r.Freed(pods)
	if r.Reason == "" {
		r.Annotations = map[string]string{}
		set := func(key, value string) {
			if key != "" {
				r.Annotations[key] = value
			}
		}
		set(r.parameters.cpuRequest, fmt.Sprintf("%dm", int64(r.Recommended.CPURequest*1000+0.5)))
		set(r.parameters.memoryRequest, fmt.Sprintf("%dMi", int64(r.Recommended.MemoryRequest)>>20))
		set(r.parameters.memoryLimit, fmt.Sprintf("%dMi", int64(r.Recommended.MemoryLimit)>>20))
	}
}

// apply writes each recommendation as override annotations on each of the
// workload's running injected Pods, one merge patch each, so that kubectl
// inject restart resizes them in place: a Pod injected at admission is
// checked against its own annotations. (Changing the pod template's
// annotations would roll every Pod; a workload whose template carries the
// sidecar is not applied: in_pod_template.)
func (o *SizeOptions) apply(ctx context.Context, client dynamic.Interface, rows []sized) error {
	for i := range rows {
		r := &rows[i]
		if r.Reason != "" {
			continue
		}
		if r.inTemplate {
			r.Reason = reasonInPodTemplate
			r.Message = "the sidecar is part of its pod template: put the recommended annotations there (the change rolls its Pods), nothing was written"
			continue
		}
		data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": r.Annotations}})
		if err != nil {
			return err
		}
		patch := func(gvr schema.GroupVersionResource, name string) error {
			_, err := client.Resource(gvr).Namespace(r.Namespace).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: o.FieldManager})
			return err
		}
		names := slices.Sorted(maps.Keys(r.pods))
		for _, name := range names {
			if err := patch(gvrOf("pods"), name); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("writing the recommendation of %s/%s on pod/%s: %s", r.Namespace, r.Workload, name, readError(err))
			}
		}
		r.Applied = true
		pods, them := fmt.Sprintf("its %d Pods", len(names)), "them"
		if len(names) == 1 {
			pods, them = "its Pod", "it"
		}
		fmt.Fprintf(o.ErrOut, "%s/%s: %s annotated (%s); kubectl inject restart -n %s %s resizes %s in place\n", r.Namespace, r.Workload, pods, r.Container, r.Namespace, r.Workload, them)
	}
	return nil
}
