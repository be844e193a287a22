package rollout

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InPlaceBudget is how many of a workload's Pods may be upgraded in place
// at once, from what its own rollout would allow to be unavailable, and
// says where the figure comes from:
//
//   - a Deployment: spec.strategy.rollingUpdate.maxUnavailable (default
//     25%), a percentage of spec.replicas rounded down, as the Deployment
//     controller does; a Recreate Deployment, 1;
//   - a StatefulSet: spec.updateStrategy.rollingUpdate.maxUnavailable
//     (default 1), a percentage rounded up, as its controller does;
//   - a DaemonSet: the same field, a percentage of the Pods it schedules
//     (status.desiredNumberScheduled) rounded up;
//   - anything else (a ReplicaSet, a bare Pod): 1.
//
// A budget of 0 (maxUnavailable 0, with a surge) is 1: an upgrade in
// place cannot surge, and the Pod it drains first serves every request
// sent to it until it has left its Services' endpoints. PodDisruptionBudgets
// and --max-in-flight bound it further, in the command.
func InPlaceBudget(obj *unstructured.Unstructured) (int, string) {
	var (
		value    any
		found    bool
		total    int64
		roundUp  bool
		field    string
		fallback = "1"
	)
	switch obj.GetKind() {
	case "Deployment":
		if t, _, _ := unstructured.NestedString(obj.Object, "spec", "strategy", "type"); t == "Recreate" {
			return 1, "a Recreate Deployment: one Pod at a time"
		}
		field, fallback, total = "spec.strategy.rollingUpdate.maxUnavailable", "25%", replicasOf(obj)
		value, found, _ = unstructured.NestedFieldNoCopy(obj.Object, "spec", "strategy", "rollingUpdate", "maxUnavailable")
	case "StatefulSet":
		field, total, roundUp = "spec.updateStrategy.rollingUpdate.maxUnavailable", replicasOf(obj), true
		value, found, _ = unstructured.NestedFieldNoCopy(obj.Object, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
	case "DaemonSet":
		field, roundUp = "spec.updateStrategy.rollingUpdate.maxUnavailable", true
		total, _, _ = unstructured.NestedInt64(obj.Object, "status", "desiredNumberScheduled")
		value, found, _ = unstructured.NestedFieldNoCopy(obj.Object, "spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
	default:
		return 1, "one Pod at a time"
	}
	raw := fallback
	if found {
		raw = fmt.Sprint(value)
	}
	n, err := scaled(raw, total, roundUp)
	if err != nil {
		return 1, fmt.Sprintf("%s: %v: one Pod at a time", field, err)
	}
	from := fmt.Sprintf("%s %s of %d", field, raw, total)
	if !found {
		from = fmt.Sprintf("%s (default %s) of %d", field, raw, total)
	}
	if n < 1 {
		return 1, from + " is 0: one Pod at a time"
	}
	return n, fmt.Sprintf("%s: %d at a time", from, n)
}

// scaled resolves an int-or-percent against total, as the controllers'
// intstr.GetScaledValueFromIntOrPercent does.
func scaled(raw string, total int64, roundUp bool) (int, error) {
	if p, ok := strings.CutSuffix(raw, "%"); ok {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%q is not a percentage", raw)
		}
		f := float64(v) * float64(total) / 100
		if roundUp {
			return int(math.Ceil(f)), nil
		}
		return int(math.Floor(f)), nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a count or a percentage", raw)
	}
	return v, nil
}

// InService counts the endpoints of slices (discovery.k8s.io/v1
// EndpointSlices) that point at the Pod with uid, and how many of them a
// client would send to: ready, or with no ready condition (unknown, which
// clients read as ready).
func InService(slices []*unstructured.Unstructured, namespace, pod string, uid string) (listed, ready int) {
	for _, s := range slices {
		endpoints, _, _ := unstructured.NestedSlice(s.Object, "endpoints")
		for _, item := range endpoints {
			e, _ := item.(map[string]any)
			ref, _ := e["targetRef"].(map[string]any)
			if ref == nil || ref["kind"] != "Pod" || ref["name"] != pod {
				continue
			}
			if ns, _ := ref["namespace"].(string); ns != "" && ns != namespace {
				continue
			}
			if u, _ := ref["uid"].(string); u != "" && uid != "" && u != uid {
				continue
			}
			listed++
			conditions, _ := e["conditions"].(map[string]any)
			if r, ok := conditions["ready"].(bool); !ok || r {
				ready++
			}
		}
	}
	return listed, ready
}

// SidecarImageRestartVersion is the first kubelet that restarts a running
// native sidecar (an init container with restartPolicy Always) whose image
// changed: kubernetes/kubernetes#126525, in v1.32.0 and in no earlier
// release's patches. An older kubelet keeps the old proxy running, and the
// Pod would never run the new image: such a Pod is recreated.
const SidecarImageRestartVersion = "v1.32.0"

// KubeletRestartsSidecarImage reports whether a kubelet of version (a
// Node's status.nodeInfo.kubeletVersion, v1.31.4 or v1.32.0-eks-1234)
// restarts a native sidecar on its new image; known is false when the
// version cannot be read.
func KubeletRestartsSidecarImage(version string) (restarts, known bool) {
	major, minor, ok := minorVersion(version)
	if !ok {
		return true, false
	}
	return major > 1 || (major == 1 && minor >= 32), true
}

// minorVersion reads major and minor of v1.32.0, 1.31, v1.30.2+k3s1.
func minorVersion(v string) (major, minor int, ok bool) {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err error
	if major, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, false
	}
	digits := parts[1]
	for i, r := range digits {
		if r < '0' || r > '9' {
			digits = digits[:i]
			break
		}
	}
	if minor, err = strconv.Atoi(digits); err != nil {
		return 0, 0, false
	}
	return major, minor, true
}
