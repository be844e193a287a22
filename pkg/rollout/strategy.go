package rollout

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

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
	upgrades, why := opts.Decisions.PodUpgrades(opts.Injector, obj, opts.Pods(obj))
	if why == "" && len(upgrades) == 0 {
		why = "no Pod of it can be upgraded in place"
	}
	if why != "" {
		s.StrategyReason = why
		return false
	}
	if why := notInPlace(obj, opts.Pods(obj), upgrades, opts.NodeVersion); why != "" {
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
	return (*Decisions)(nil).PodUpgrades(in, workload, pods)
}

// Decisions remembers DecideUpgrade's verdict on each Pod at its
// resourceVersion: a restart judges a workload's Pods when it plans and
// again before every batch, and most of them have not changed since (an
// injection per Pod and judgement was most of a fleet upgrade's CPU).
// One Decisions serves one injector; it is safe for concurrent use, and
// a nil one remembers nothing.
type Decisions struct {
	mu    sync.Mutex
	byPod map[types.UID]decision
}

type decision struct {
	resourceVersion string
	u               Upgrade
}

// Decide is DecideUpgrade(in, pod), remembered.
func (d *Decisions) Decide(in *inject.Injector, pod *unstructured.Unstructured) Upgrade {
	uid, rv := pod.GetUID(), pod.GetResourceVersion()
	if d == nil || uid == "" || rv == "" {
		return DecideUpgrade(in, pod)
	}
	d.mu.Lock()
	got, ok := d.byPod[uid]
	d.mu.Unlock()
	if ok && got.resourceVersion == rv {
		return got.u
	}
	u := DecideUpgrade(in, pod)
	d.mu.Lock()
	if d.byPod == nil {
		d.byPod = map[types.UID]decision{}
	}
	d.byPod[uid] = decision{rv, u}
	d.mu.Unlock()
	return u
}

// PodUpgrades is PodUpgrades with the verdicts remembered.
func (d *Decisions) PodUpgrades(in *inject.Injector, workload *unstructured.Unstructured, pods []*unstructured.Unstructured) ([]Upgrade, string) {
	var out []Upgrade
	for _, p := range pods {
		if p.GetDeletionTimestamp() != nil {
			continue
		}
		u := d.Decide(in, p)
		switch {
		case u.Reason == ReasonAlreadyCurrent && fleet.OlderRevision(workload, p):
			return nil, fmt.Sprintf("Pod %s was made from an older revision of the template, with the current sidecar", p.GetName())
		case u.Reason == ReasonAlreadyCurrent:
		case u.Reason == inject.ReasonNotInjected && fleet.PodBehind(in, workload, p):
			return nil, fmt.Sprintf("Pod %s: %s: %s", p.GetName(), u.Reason, u.Message)
		case u.Reason == inject.ReasonNotInjected:
		case !u.InPlace():
			return nil, fmt.Sprintf("Pod %s: %s: %s", p.GetName(), u.Reason, u.Message)
		default:
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod > out[j].Pod })
	return out, ""
}

// notInPlace says why Pods that differ only in what an upgrade in place
// changes are still recreated, "" when they are not:
//
//   - a Deployment of one replica whose sidecar's image changes: drained,
//     it would leave its Services no Pod to send to, where its rollout
//     surges a new Pod first (a resize alone restarts nothing);
//   - a Pod on a node whose kubelet does not restart a native sidecar whose
//     image changed (before SidecarImageRestartVersion): the old proxy
//     would keep running, and the Pod never be Ready on the new image.
func notInPlace(obj *unstructured.Unstructured, pods []*unstructured.Unstructured, upgrades []Upgrade, nodeVersion func(string) string) string {
	restarts := false // a sidecar restarts (an image changes); a resize alone restarts nothing
	for _, u := range upgrades {
		restarts = restarts || len(u.Images) > 0
	}
	if restarts && obj.GetKind() == "Deployment" && replicasOf(obj) < 2 {
		if t, _, _ := unstructured.NestedString(obj.Object, "spec", "strategy", "type"); t != "Recreate" {
			return fmt.Sprintf("%s: a Deployment of %d replica, which its Services would lose while its proxy is drained and upgraded in place; its rollout starts a new Pod first", ReasonSingleReplica, replicasOf(obj))
		}
	}
	if nodeVersion == nil {
		return ""
	}
	nodes := map[string]string{}
	for _, p := range pods {
		nodes[p.GetName()], _, _ = unstructured.NestedString(p.Object, "spec", "nodeName")
	}
	for _, u := range upgrades {
		native := false
		for _, c := range u.Images {
			native = native || c.Init
		}
		node := nodes[u.Pod]
		if !native || node == "" {
			continue
		}
		version := nodeVersion(node)
		if restarts, known := KubeletRestartsSidecarImage(version); known && !restarts {
			return fmt.Sprintf("%s: Pod %s runs on node %s, whose kubelet %s does not restart a native sidecar whose image changed (%s and later do)", ReasonOldKubelet, u.Pod, node, version, SidecarImageRestartVersion)
		}
	}
	return ""
}
