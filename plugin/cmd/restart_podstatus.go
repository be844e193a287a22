package cmd

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// runsImages reports a Pod whose container statuses show every changed
// container on its new image (the kubelet may report it fully qualified:
// docker.io/envoyproxy/envoy:v1.41.0).
func runsImages(pod *unstructured.Unstructured, u rollout.Upgrade) bool {
	for _, c := range u.Images {
		st := containerStatus(pod, c.Container, c.Init)
		image, _ := st["image"].(string)
		if st == nil || !(image == c.To || strings.HasSuffix(image, "/"+c.To)) {
			return false
		}
	}
	return true
}

func containerStatus(pod *unstructured.Unstructured, name string, init bool) map[string]any {
	field := "containerStatuses"
	if init {
		field = "initContainerStatuses"
	}
	list, _, _ := unstructured.NestedSlice(pod.Object, "status", field)
	for _, item := range list {
		st, _ := item.(map[string]any)
		if st["name"] == name {
			return st
		}
	}
	return nil
}

// notReadyWhy names the first changed container that is not Ready on its
// new image, and the kubelet's reason (ImagePullBackOff,
// CrashLoopBackOff, a failing readiness probe).
func notReadyWhy(pod *unstructured.Unstructured, u rollout.Upgrade) string {
	for _, c := range u.Images {
		st := containerStatus(pod, c.Container, c.Init)
		ready, _ := st["ready"].(bool)
		if ready && runsImages(pod, rollout.Upgrade{Images: []rollout.ImageChange{c}}) {
			continue
		}
		return fmt.Sprintf("container %s (%s): %s", c.Container, c.To, kubeletReason(st))
	}
	if _, infeasible := resizeDone(pod, u); infeasible != "" {
		return infeasible
	}
	for _, r := range u.Resources {
		if !rollout.RunsResources(containerStatus(pod, r.Container, r.Init), r.To) {
			return fmt.Sprintf("container %s: not resized yet (%s)", r.Container, resizeCondition(pod))
		}
	}
	return "the Pod is not Ready"
}

// resizeDone reports whether the kubelet runs every resized sidecar with
// its new resources, no resize pending or in progress; infeasible is the
// kubelet's message when it will never apply the resize.
func resizeDone(pod *unstructured.Unstructured, u rollout.Upgrade) (done bool, infeasible string) {
	if len(u.Resources) == 0 {
		return true, ""
	}
	if c := activeResize(pod); c != nil {
		if c["type"] == "PodResizePending" && c["reason"] == "Infeasible" {
			msg, _ := c["message"].(string)
			return false, "resize Infeasible: " + msg
		}
		return false, ""
	}
	for _, r := range u.Resources {
		if !rollout.RunsResources(containerStatus(pod, r.Container, r.Init), r.To) {
			return false, ""
		}
	}
	return true, ""
}

// activeResize is the Pod's condition of a resize the kubelet has not
// finished (PodResizePending first, then PodResizeInProgress), nil when
// there is none.
func activeResize(pod *unstructured.Unstructured) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(pod.Object, "status", "conditions")
	for _, typ := range []string{"PodResizePending", "PodResizeInProgress"} {
		for _, item := range conditions {
			if c, _ := item.(map[string]any); c["type"] == typ && c["status"] == "True" {
				return c
			}
		}
	}
	return nil
}

// resizeCondition names the Pod's resize condition, if it has one.
func resizeCondition(pod *unstructured.Unstructured) string {
	c := activeResize(pod)
	if c == nil {
		return "no resize condition"
	}
	reason, _ := c["reason"].(string)
	msg, _ := c["message"].(string)
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", c["type"], reason, msg))
}

// kubeletReason is why the kubelet says a container is not ready.
func kubeletReason(st map[string]any) string {
	if st == nil {
		return "no status yet"
	}
	if r, _, _ := unstructured.NestedString(st, "state", "waiting", "reason"); r != "" {
		if msg, _, _ := unstructured.NestedString(st, "state", "waiting", "message"); msg != "" {
			return r + " (" + msg + ")"
		}
		return r
	}
	if r, _, _ := unstructured.NestedString(st, "lastState", "terminated", "reason"); r != "" {
		return "last terminated: " + r
	}
	if _, ok, _ := unstructured.NestedMap(st, "state", "running"); ok {
		return "running, its readiness probe failing"
	}
	return "not started"
}
