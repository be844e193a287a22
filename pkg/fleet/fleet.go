package fleet

import (
	"encoding/json"
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/inject/record"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// States of a row.
const (
	// Current: injected with the current template and the override values
	// the object's annotations ask for now.
	Current = "current"
	// Outdated: injected with another template, or with override values
	// the annotations no longer ask for.
	Outdated    = "outdated"
	NotInjected = "not-injected" // would be injected now
	// Skipped and errors are written "skipped:<reason>" and "error:<reason>".
)

// Row is one workload, or one Pod listed by itself.
type Row struct {
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind"`
	Group     string `json:"group,omitempty"`
	Name      string `json:"name"`
	// Profile is the profile reported on ("" for the default one).
	Profile string `json:"profile,omitempty"`
	State   string `json:"state"`
	// Images are the recorded sidecars' images, "name=image".
	Images []string `json:"images,omitempty"`
	// RecordedTemplate is the hash in the status record; CurrentTemplate
	// the hash of the template "current" means.
	RecordedTemplate string `json:"recordedTemplate,omitempty"`
	CurrentTemplate  string `json:"currentTemplate"`
	// RecordedValues are the override values the record was injected with
	// (only the annotations that were set), by parameter name.
	RecordedValues map[string]string `json:"recordedValues,omitempty"`
	// Pods and PodsBehind count a workload's Pods (those its controllers
	// made, Pods injected at admission included), and those whose record
	// differs from the workload's template, or, injected at admission,
	// from the current template: they need a restart. Neither counts a
	// terminating Pod (deletionTimestamp set): it is on its way out
	// whatever it runs, and restarting would not change it;
	// PodsTerminating counts those.
	Pods            int    `json:"pods"`
	PodsBehind      int    `json:"podsBehind"`
	PodsTerminating int    `json:"podsTerminating"`
	Restart         string `json:"restart,omitempty"`
	// Admission marks a Pod injected at admission (its workload's template
	// has no record); Bare one without a controller.
	Admission bool `json:"injectedAtAdmission,omitempty"`
	Bare      bool `json:"bare,omitempty"`
	// Terminating marks a Pod listed by itself that is being deleted:
	// it is neither current nor behind, whatever its state says.
	Terminating bool   `json:"terminating,omitempty"`
	Message     string `json:"message,omitempty"`
	// WaitingFor lists what the injected sidecar needs that the namespace
	// lacks ("configmap/envoy"): the Pods wait for it and never start.
	WaitingFor []string `json:"waitingFor,omitempty"`

	// record identifies the workload's record (template hash and values),
	// to tell which Pods run another one.
	record string
	// onDelete marks an OnDelete StatefulSet or DaemonSet; revision is
	// the revision its Pods are made from now (nil when unknown).
	onDelete bool
	revision *revision
}

// Ref is the row's object as kubectl names it: deployment.apps/web.
func (r Row) Ref() string {
	kind := strings.ToLower(r.Kind)
	if r.Group != "" {
		kind += "." + r.Group
	}
	return kind + "/" + r.Name
}

// NeedsAttention reports an outdated object, Pods behind their template,
// or a sidecar waiting for an object its namespace lacks. A Pod listed by
// itself that is terminating needs none: it is going.
func (r Row) NeedsAttention() bool {
	if r.Terminating {
		return false
	}
	return r.State == Outdated || r.PodsBehind > 0 || len(r.WaitingFor) > 0
}

// Failed reports a row whose object could not be classified: its state
// is error:<reason> (a conflict, an invalid object).
func (r Row) Failed() bool { return strings.HasPrefix(r.State, "error:") }

// Build classifies objs (workloads and Pods, any namespaces) with in.
// ReplicaSets and Jobs that a Deployment or CronJob controls are folded
// into it: their Pods count for the top controller.
func Build(in *inject.Injector, objs []*unstructured.Unstructured) []Row {
	byUID := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byUID[string(o.GetUID())] = o
	}
	rows := map[string]*Row{} // by uid, workloads only
	var order []string
	var pods []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Pod" {
			pods = append(pods, o)
			continue
		}
		if top := topController(o, byUID); top != o {
			continue // folded into its controller
		}
		r := classify(in, o)
		rows[string(o.GetUID())] = &r
		order = append(order, string(o.GetUID()))
	}
	var out []Row
	for _, p := range pods {
		top := topController(p, byUID)
		w := rows[string(top.GetUID())]
		record := podRecord(in.StatusAnnotation(), p)
		terminating := p.GetDeletionTimestamp() != nil
		if top == p || w == nil {
			r := classify(in, p)
			r.Bare = controllerOf(p) == nil
			r.Terminating = terminating
			out = append(out, r)
			continue
		}
		if terminating {
			// Not listed by itself either when injected at admission:
			// its workload's count says it is going.
			w.PodsTerminating++
			continue
		}
		w.Pods++
		if record != "" && w.RecordedTemplate == "" {
			// Injected at admission: listed by itself too, with its own
			// state, and behind when that is outdated (a restart brings
			// the current template through admission).
			r := classify(in, p)
			r.Admission = true
			out = append(out, r)
			if r.State == Outdated || w.olderRevision(p) {
				w.PodsBehind++
			}
			continue
		}
		if record != w.record || w.olderRevision(p) {
			w.PodsBehind++
		}
	}
	for _, uid := range order {
		r := rows[uid]
		if r.PodsBehind > 0 {
			r.Restart = restartCommand(*r)
		}
		out = append(out, *r)
	}
	Sort(out)
	return out
}

// Sort orders rows as the table shows them: what needs attention first
// (outdated, then Pods behind, errors, not injected, skipped, current),
// then by namespace, kind and name.
func Sort(rows []Row) {
	rank := func(r Row) int {
		switch {
		case r.State == Outdated:
			return 0
		case r.PodsBehind > 0:
			return 1
		case strings.HasPrefix(r.State, "error:"):
			return 2
		case r.State == NotInjected:
			return 3
		case strings.HasPrefix(r.State, "skipped:"):
			return 4
		}
		return 5
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
}

// classify runs the core's inspection on one object.
func classify(in *inject.Injector, o *unstructured.Unstructured) Row {
	group := o.GroupVersionKind().Group
	r := Row{Namespace: o.GetNamespace(), Kind: o.GetKind(), Group: group, Name: o.GetName(), Profile: in.Profile(), CurrentTemplate: in.TemplateHash()}
	r.onDelete, r.revision = onDeleteRevision(o)
	data, err := json.Marshal(o.Object)
	var node *yaml.RNode
	if err == nil {
		node, err = yaml.Parse(string(data))
	}
	if err != nil {
		r.State, r.Message = "error:invalid_object", err.Error()
		return r
	}
	ins := in.Inspect(node)
	if ins.Status != nil {
		r.RecordedTemplate, r.RecordedValues = ins.Status.Template, ins.Status.Values
		r.record = recordKey(ins.Status)
	}
	for _, ni := range ins.Images {
		r.Images = append(r.Images, ni.Name+"="+ni.Image)
	}
	switch e := ins.Entry; e.Action {
	case inject.Unchanged:
		r.State = Current
	case inject.Updated:
		r.State = Outdated
		if r.RecordedTemplate == r.CurrentTemplate {
			r.Message = "the override annotations ask for other values than the record holds"
		}
	case inject.Injected:
		r.State = NotInjected
	case inject.Skipped:
		r.State, r.Message = "skipped:"+string(e.Reason), e.Message
	default:
		r.State, r.Message = "error:"+string(e.Reason), e.Message
	}
	return r
}

// podRecord identifies the record a Pod holds under key (see recordKey),
// "" for none.
func podRecord(key string, p *unstructured.Unstructured) string {
	value, ok := p.GetAnnotations()[key]
	if !ok {
		return ""
	}
	s, err := record.Parse(key, value)
	if err != nil {
		return "invalid"
	}
	return recordKey(s)
}

// recordKey identifies what a record injected: the template hash and the
// override values. A Pod whose workload was injected again after an
// override annotation changed runs the old values until it is recreated,
// with the same template hash.
func recordKey(s *record.Status) string {
	keys := slices.Sorted(maps.Keys(s.Values))
	var b strings.Builder
	b.WriteString(s.Template)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, s.Values[k])
	}
	return b.String()
}

// topController follows controller references through the listed objects
// to the top-most one (o itself when it has none listed).
func topController(o *unstructured.Unstructured, byUID map[string]*unstructured.Unstructured) *unstructured.Unstructured {
	cur := o
	for range 4 {
		ref := controllerOf(cur)
		if ref == nil {
			break
		}
		owner, ok := byUID[ref.UID]
		if !ok {
			break
		}
		cur = owner
	}
	return cur
}

type ownerRef struct{ Kind, Name, UID string }

func controllerOf(o *unstructured.Unstructured) *ownerRef {
	for _, r := range o.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return &ownerRef{Kind: r.Kind, Name: r.Name, UID: string(r.UID)}
		}
	}
	return nil
}

// restartCommand says how to recreate a workload's Pods. An OnDelete
// StatefulSet or DaemonSet does not roll on a rollout restart: kubectl
// inject restart deletes its Pods one at a time.
func restartCommand(r Row) string {
	switch {
	case r.onDelete:
		cmd := fmt.Sprintf("kubectl inject restart %s -n %s", r.Ref(), r.Namespace)
		if r.Profile != "" {
			cmd += " --profile " + r.Profile
		}
		return cmd
	case Rolls(r.Kind):
		return fmt.Sprintf("kubectl rollout restart %s -n %s", r.Ref(), r.Namespace)
	}
	return fmt.Sprintf("delete the Pods of %s in %s; its controller creates them again", r.Ref(), r.Namespace)
}

// Rolls reports a kind whose pod template change is rolled out by its
// controller: kubectl rollout restart rolls it, and restart's Restart and
// Reinject apply.
func Rolls(kind string) bool {
	switch kind {
	case "Deployment", "StatefulSet", "DaemonSet":
		return true
	}
	return false
}

// PodBehind reports whether pod, made by workload's controller, runs
// another record than the workload's template holds or, when the
// template has none (the Pod was injected at admission), an outdated one:
// it is what Build counts in PodsBehind, but for a terminating Pod, which
// Build counts apart and PodBehind judges by what it runs. Restarts use
// it to pick the Pods of an OnDelete workload to delete, and to wait for
// those already deleted to go.
func PodBehind(in *inject.Injector, workload, pod *unstructured.Unstructured) bool {
	w := classify(in, workload)
	record := podRecord(in.StatusAnnotation(), pod)
	if w.olderRevision(pod) {
		return true
	}
	if w.RecordedTemplate == "" {
		return record != "" && classify(in, pod).State == Outdated
	}
	return record != w.record
}
