package rollout

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// resizableResources are the resources the kubelet changes on a running
// container (the Pod's resize subresource); any other change of a
// container's resources needs the Pod created again.
var resizableResources = map[string]bool{"cpu": true, "memory": true}

// resizable compares a sidecar's resources on the Pod (from) and in the
// current template (to): it returns the first field a resize cannot
// change (requests.ephemeral-storage, claims), "" when there is none.
func resizable(from, to map[string]any) string {
	for _, key := range unionKeys(from, to) {
		if key != "requests" && key != "limits" {
			if !covers(from[key], to[key]) {
				return key
			}
			continue
		}
		f, t := asMap(from[key]), asMap(to[key])
		for _, name := range unionKeys(f, t) {
			same := sameQuantities(map[string]any{name: f[name]}, map[string]any{name: t[name]})
			// a resize cannot remove a request or a limit either
			if !same && (!resizableResources[name] || t[name] == nil) {
				return key + "." + name
			}
		}
	}
	return ""
}

// resizeRefused says why the API server would refuse to resize pod (a
// Pod as read from the cluster), "" when it would not: as its validation
// of the resize subresource does, a Windows Pod cannot be resized, nor a
// Pod whose node does not report its running containers' resources (a
// kubelet without in-place resize). A static pod's mirror, which cannot
// be resized either, is never injected (mirror_pod).
func resizeRefused(pod map[string]any) string {
	if asMap(asMap(pod["spec"])["os"])["name"] == "windows" {
		return "a Windows Pod cannot be resized"
	}
	for _, st := range asList(asMap(pod["status"])["containerStatuses"]) {
		st := asMap(st)
		if _, running := asMap(st["state"])["running"]; running {
			if _, ok := st["resources"]; !ok {
				return "its node does not report its containers' resources: the kubelet cannot resize a running Pod"
			}
			break
		}
	}
	return ""
}

// QoS classes of a Pod, as the API server computes them.
const (
	qosGuaranteed = "Guaranteed"
	qosBurstable  = "Burstable"
	qosBestEffort = "BestEffort"
)

// qosClass computes the QoS class of a Pod's spec with the containers of
// resized given their new resources: the API server refuses a resize that
// would change it. It follows the API server's rule over cpu and memory:
// BestEffort when no container requests or limits either, Guaranteed
// when every container limits both and the requests equal the limits,
// Burstable otherwise. A request left out is its limit (the API server
// fills it in). A Pod with pod-level resources keeps its class.
func qosClass(spec map[string]any, resized []ResourceChange) string {
	if _, ok := spec["resources"]; ok {
		return "set by the Pod's own resources"
	}
	requests, limits := map[string]resource.Quantity{}, map[string]resource.Quantity{}
	guaranteed, some := true, false
	for _, field := range []string{"initContainers", "containers"} {
		for _, c := range asList(spec[field]) {
			c := asMap(c)
			res := asMap(c["resources"])
			for _, r := range resized {
				if r.Container == c["name"] && r.Init == (field == "initContainers") {
					res = r.To
				}
			}
			req, lim := quantities(asMap(res["requests"])), quantities(asMap(res["limits"]))
			for name, q := range lim {
				if _, ok := req[name]; !ok {
					req[name] = q
				}
			}
			for name, q := range req {
				some = true
				add(requests, name, q)
			}
			for name, q := range lim {
				some = true
				add(limits, name, q)
			}
			if len(lim) != len(resizableResources) {
				guaranteed = false
			}
		}
	}
	switch {
	case !some:
		return qosBestEffort
	case !guaranteed || len(requests) != len(limits):
		return qosBurstable
	}
	for name, q := range requests {
		if l, ok := limits[name]; !ok || l.Cmp(q) != 0 {
			return qosBurstable
		}
	}
	return qosGuaranteed
}

// quantities reads the cpu and memory of a resource list, leaving out
// zero quantities (as the API server does when it computes the class).
func quantities(list map[string]any) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	for name := range resizableResources {
		s, ok := quantityText(list[name])
		if !ok {
			continue
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.IsZero() {
			continue
		}
		out[name] = q
	}
	return out
}

// quantityText is a quantity as text: a template may write it as a YAML
// number (cpu: 2).
func quantityText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	}
	return "", false
}

// canonicalResources is a container's resources with every quantity as
// text, as the API server and a resize take them.
func canonicalResources(r map[string]any) map[string]any {
	out := maps.Clone(r)
	for _, key := range []string{"requests", "limits"} {
		list := asMap(r[key])
		if list == nil {
			continue
		}
		text := make(map[string]any, len(list))
		for name, v := range list {
			if s, ok := quantityText(v); ok {
				text[name] = s
			} else {
				text[name] = v
			}
		}
		out[key] = text
	}
	return out
}

func add(sum map[string]resource.Quantity, name string, q resource.Quantity) {
	total := sum[name]
	total.Add(q)
	sum[name] = total
}

// ResizePatch is the strategic merge patch of the Pod's resize
// subresource that gives the sidecars their new resources; nil when the
// upgrade changes none.
func (u Upgrade) ResizePatch() ([]byte, error) {
	return u.resizePatch(func(r ResourceChange) map[string]any { return r.To })
}

// RollbackResizePatch gives the sidecars back the resources they had.
func (u Upgrade) RollbackResizePatch() ([]byte, error) {
	return u.resizePatch(func(r ResourceChange) map[string]any { return r.From })
}

func (u Upgrade) resizePatch(resourcesOf func(ResourceChange) map[string]any) ([]byte, error) {
	if len(u.Resources) == 0 {
		return nil, nil
	}
	spec := map[string]any{}
	for _, r := range u.Resources {
		to := resourcesOf(r)
		// a resize removes no request or limit (resizable): each is set.
		resources := map[string]any{}
		for _, key := range []string{"requests", "limits"} {
			if list := asMap(to[key]); len(list) > 0 {
				resources[key] = list
			}
		}
		field := "containers"
		if r.Init {
			field = "initContainers"
		}
		list, _ := spec[field].([]any)
		spec[field] = append(list, map[string]any{"name": r.Container, "resources": resources})
	}
	data, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return nil, fmt.Errorf("encoding the resize of Pod %s: %w", u.Pod, err)
	}
	return data, nil
}

// RunsResources reports whether a container's status (the kubelet's,
// status.containerStatuses[*]) shows it running with the requests and
// limits of want.
func RunsResources(status map[string]any, want map[string]any) bool {
	got := asMap(status["resources"])
	if got == nil {
		return false
	}
	for _, key := range []string{"requests", "limits"} {
		if !sameQuantities(got[key], want[key]) {
			return false
		}
	}
	return true
}

// FormatResources writes resources as a flag would: "requests
// cpu=100m,memory=64Mi; limits cpu=1,memory=512Mi".
func FormatResources(r map[string]any) string {
	var parts []string
	for _, key := range []string{"requests", "limits"} {
		list := asMap(r[key])
		if len(list) == 0 {
			continue
		}
		var items []string
		for _, name := range unionKeys(list) {
			s, _ := quantityText(list[name])
			items = append(items, name+"="+s)
		}
		parts = append(parts, key+" "+strings.Join(items, ","))
	}
	return strings.Join(parts, "; ")
}
