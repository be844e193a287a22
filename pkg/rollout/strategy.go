package rollout

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Strategies of --strategy: how a workload's Pods get the current sidecar.
const (
	// StrategyAuto upgrades in place where Kubernetes allows it and
	// recreates otherwise.
	StrategyAuto = "auto"
	// StrategyInPlace only upgrades in place; a workload that cannot be is
	// reported and left as it is.
	StrategyInPlace = "in-place"
	// StrategyRecreate recreates every Pod (a rollout, or deletions).
	StrategyRecreate = "recreate"
)

// Strategies lists the values of --strategy.
var Strategies = []string{StrategyAuto, StrategyInPlace, StrategyRecreate}

// ReasonRollsOnChange: the workload's template carries the sidecar and its
// controller rolls on a template change, so it is recreated.
const ReasonRollsOnChange = "rolls_on_change"

// ReasonInPlaceNotPossible: --strategy in-place, and the workload cannot be
// upgraded in place (the step's message says why).
const ReasonInPlaceNotPossible = "in_place_not_possible"

// Pods finds the live Pods a workload's controllers made (a Deployment's
// through its ReplicaSets).
type Pods func(workload *unstructured.Unstructured) []*unstructured.Unstructured

// strategyFor decides, for a step that would restart or delete Pods, whether
// its Pods are upgraded in place, and says why in s.StrategyReason. It
// returns false (recreate) with the reason.
func strategyFor(s *Step, obj *unstructured.Unstructured, opts PlanOptions) bool {
	switch {
	case opts.Strategy == StrategyRecreate, opts.Strategy == "":
		s.StrategyReason = "--strategy recreate"
		return false
	case obj == nil || opts.Injector == nil || opts.Pods == nil:
		s.StrategyReason = "its Pods are not known"
		return false
	}
	upgrades, why := PodUpgrades(opts.Injector, obj, opts.Pods(obj))
	if why == "" && len(upgrades) == 0 {
		why = "no Pod of it can be upgraded in place"
	}
	if why != "" {
		s.StrategyReason = why
		return false
	}
	s.PodsInPlace = len(upgrades)
	kind := "injected at admission"
	switch {
	case obj.GetKind() == "Pod":
		kind = "a Pod without a controller"
	case OnDelete(obj):
		kind = "updateStrategy OnDelete"
	}
	what := "image"
	for _, u := range upgrades {
		if len(u.Resources) > 0 {
			what = "image and resources (resized within their QoS class)"
			break
		}
	}
	s.StrategyReason = fmt.Sprintf("%s; the %d Pods behind differ from the current template only in the sidecar's %s", kind, len(upgrades), what)
	return true
}

// PodUpgrades decides the upgrade of every live Pod of workload that is
// behind, in the order they are upgraded (highest name first, as a
// StatefulSet rolls). It returns why they cannot all be upgraded in place
// ("" when they can).
func PodUpgrades(in *inject.Injector, workload *unstructured.Unstructured, pods []*unstructured.Unstructured) ([]Upgrade, string) {
	var out []Upgrade
	for _, p := range pods {
		if p.GetDeletionTimestamp() != nil {
			continue
		}
		u := DecideUpgrade(in, p)
		switch {
		case u.Reason == ReasonAlreadyCurrent && fleet.OlderRevision(workload, p):
			return nil, fmt.Sprintf("Pod %s was made from an older revision of the template, with the current sidecar", p.GetName())
		case u.Reason == ReasonAlreadyCurrent:
		case u.Reason == ReasonNotInjectedPod && fleet.PodBehind(in, workload, p):
			return nil, fmt.Sprintf("Pod %s: %s: %s", p.GetName(), u.Reason, u.Message)
		case u.Reason == ReasonNotInjectedPod:
		case !u.InPlace():
			return nil, fmt.Sprintf("Pod %s: %s: %s", p.GetName(), u.Reason, u.Message)
		default:
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod > out[j].Pod })
	return out, ""
}
