package rollout

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// Action is what a step does to its workload.
type Action string

// Actions (see the package documentation).
const (
	Restart    Action = "restart"
	Reinject   Action = "reinject"
	DeletePods Action = "delete-pods"
	Wait       Action = "wait"
	Recreate   Action = "recreate"
	InPlace    Action = "in-place"
	Report     Action = "report"
)

// Step is one workload of a plan.
type Step struct {
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind"`
	Group     string `json:"group,omitempty"`
	Name      string `json:"name"`
	Action    Action `json:"action"`
	// Inject, for DeletePods, injects the current template first.
	Inject bool `json:"inject,omitempty"`
	// Pods and PodsBehind are the status row's counts.
	Pods       int `json:"pods"`
	PodsBehind int `json:"podsBehind"`
	// Strategy is how the step's Pods get the current sidecar (in-place,
	// recreate) and StrategyReason why; PodsInPlace counts the Pods it
	// upgrades in place.
	Strategy       string `json:"strategy,omitempty"`
	StrategyReason string `json:"strategyReason,omitempty"`
	PodsInPlace    int    `json:"podsInPlace,omitempty"`
	// Reason and Message say why a Report step is left alone.
	Reason  reason.Code `json:"reason,omitempty"`
	Message string      `json:"message,omitempty"`
}

// Ref names the step's workload as kubectl does: deployment.apps/web.
func (s Step) Ref() string {
	kind := strings.ToLower(s.Kind)
	if s.Group != "" {
		kind += "." + s.Group
	}
	return kind + "/" + s.Name
}

// Moves reports a step that changes its workload (every action but Report).
func (s Step) Moves() bool { return s.Action != Report }

// PlanOptions tune Plan.
type PlanOptions struct {
	// Recreate deletes and creates again the bare Pods that are behind,
	// instead of reporting them.
	Recreate bool
	// SystemNamespaces lets the plan reach system namespaces (kube-system,
	// ...): the command sets it when -n names one.
	SystemNamespaces bool
	// Strategy is StrategyAuto, StrategyInPlace or StrategyRecreate ("" is
	// StrategyRecreate). Upgrades in place are judged with Injector on
	// the Pods that Pods finds.
	Strategy string
	Injector *inject.Injector
	Pods     Pods
	// NodeVersion, when set, is the kubelet version of a Node
	// (status.nodeInfo.kubeletVersion; "" when not known): a Pod whose
	// node's kubelet does not restart a native sidecar on its new image
	// is recreated.
	NodeVersion func(node string) string
	// Decisions, when set, remembers the verdicts on Pods for the run
	// that follows the plan.
	Decisions *Decisions
}

// Object finds the object a status row was built from (nil when it is
// not known).
type Object func(namespace, kind, name string) *unstructured.Unstructured

// Plan returns the steps that bring rows to current, in the rows' order
// (outdated first, then by namespace, kind and name): one per row that is
// outdated or has Pods behind, or is in error. Pods injected at admission
// are left to their workload's step, and terminating Pods to go.
func Plan(rows []fleet.Row, objects Object, opts PlanOptions) []Step {
	var steps []Step
	for _, r := range rows {
		if r.Kind == "Pod" && (r.Admission || r.Terminating) {
			continue
		}
		if !r.NeedsAttention() && !r.Failed() {
			continue
		}
		s := Step{Namespace: r.Namespace, Kind: r.Kind, Group: r.Group, Name: r.Name, Pods: r.Pods, PodsBehind: r.PodsBehind}
		var obj *unstructured.Unstructured
		if objects != nil {
			obj = objects(r.Namespace, r.Kind, r.Name)
		}
		plan(&s, r, obj, opts)
		steps = append(steps, s)
	}
	return steps
}

// LeftAlone is the reason a restart leaves a row's Pods as they are
// without --recreate (inject.ReasonBarePod, ReasonJob), or "" when it brings them
// to the current template: status --check does not count these rows.
func LeftAlone(r fleet.Row) reason.Code {
	switch {
	case r.Kind == "Pod":
		return inject.ReasonBarePod
	case r.Kind == "Job", r.Kind == "CronJob" && r.State != fleet.Outdated:
		return ReasonJob
	}
	return ""
}

// leftAloneMessages say why, for the plan and status.
var leftAloneMessages = map[reason.Code]string{
	inject.ReasonBarePod: "a Pod without a controller cannot gain containers; restart upgrades its sidecar in place when only its image and resources changed, and --recreate deletes it and creates it again",
	ReasonJob:            "a Job's Pods are not restarted: they finish on their own, and the next Jobs of a CronJob get its template",
}

// LeftAloneMessage says why a row is left alone (LeftAlone's reason).
func LeftAloneMessage(code reason.Code) string { return leftAloneMessages[code] }

// plan decides one step's action.
func plan(s *Step, r fleet.Row, obj *unstructured.Unstructured, opts PlanOptions) {
	report := func(code reason.Code, message string) { s.Action, s.Reason, s.Message = Report, code, message }
	outdated := r.State == fleet.Outdated
	switch {
	case inject.IsSystemNamespace(r.Namespace) && !opts.SystemNamespaces:
		report(inject.ReasonSystemNamespace, r.Namespace+" is a system namespace; name it with -n "+r.Namespace+" to restart there")
	case r.Failed():
		report(ReasonError, r.State+": "+r.Message)
	case r.Kind == "Pod" && opts.Strategy != StrategyRecreate && opts.Strategy != "" && strategyFor(s, obj, opts):
		// No controller creates a bare Pod again: in place is the one
		// way it gets the current sidecar without --recreate.
		s.Action, s.Strategy = InPlace, StrategyInPlace
	case r.Kind == "Pod" && opts.Recreate:
		s.Action = Recreate
	case r.Kind == "CronJob" && outdated:
		s.Action = Reinject
	case LeftAlone(r) != "":
		report(LeftAlone(r), leftAloneMessages[LeftAlone(r)])
	case !outdated && r.PodsBehind == 0:
		report(inject.ReasonMissingReference, "the sidecar needs "+strings.Join(r.WaitingFor, ", ")+", which the namespace lacks")
	case obj != nil && OnDelete(obj):
		s.Action, s.Inject = DeletePods, outdated
		inPlaceOr(s, obj, opts)
	case !outdated && obj != nil && fleet.Rolls(obj.GetKind()) && !Status(obj).Done:
		// under way (or stuck): restarting again would only start
		// another rollout; waiting resumes it, or names why it fails.
		s.Action = Wait
	case outdated:
		s.Action = Reinject
		if fleet.Rolls(r.Kind) {
			s.Strategy, s.StrategyReason = StrategyRecreate, "the template carries the sidecar and the "+r.Kind+" rolls on a template change"
			if opts.Strategy == StrategyInPlace {
				report(ReasonInPlaceNotPossible, s.StrategyReason)
			}
		}
	default:
		s.Action = Restart
		inPlaceOr(s, obj, opts)
	}
}

// inPlaceOr makes s an upgrade in place when its Pods can all take it, and
// otherwise leaves its action (with --strategy in-place, reports it).
func inPlaceOr(s *Step, obj *unstructured.Unstructured, opts PlanOptions) {
	if strategyFor(s, obj, opts) {
		s.Action, s.Strategy = InPlace, StrategyInPlace
		return
	}
	s.Strategy = StrategyRecreate
	if opts.Strategy == StrategyInPlace {
		s.Action, s.Reason, s.Message = Report, ReasonInPlaceNotPossible, s.StrategyReason
	}
}

// Count sums a plan: the steps that move workloads, and those reported.
func Count(steps []Step) (moving, reported int) {
	for _, s := range steps {
		if s.Moves() {
			moving++
		} else {
			reported++
		}
	}
	return moving, reported
}
