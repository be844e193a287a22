package cmd

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestNotReadyWhy names the container an upgrade in place waits for and
// the kubelet's reason, from the Pod's container statuses.
func TestNotReadyWhy(t *testing.T) {
	t.Parallel()
	u := rollout.Upgrade{Pod: "web-0", Images: []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}}
	for _, tc := range []struct {
		name, status string
		runs         bool // its status shows the new image
		want         string
	}{
		{"image pull", `{initContainerStatuses: [{name: envoy, image: "envoy:b", ready: false, state: {waiting: {reason: ImagePullBackOff, message: "Back-off pulling image"}}}]}`,
			true, "container envoy (envoy:b): ImagePullBackOff (Back-off pulling image)"},
		{"crash loop", `{initContainerStatuses: [{name: envoy, image: "envoy:b", ready: false, state: {waiting: {reason: CrashLoopBackOff}}, lastState: {terminated: {reason: Error}}}]}`,
			true, "container envoy (envoy:b): CrashLoopBackOff"},
		{"probe failing", `{initContainerStatuses: [{name: envoy, image: "docker.io/library/envoy:b", ready: false, state: {running: {}}}]}`,
			true, "container envoy (envoy:b): running, its readiness probe failing"},
		{"exited", `{initContainerStatuses: [{name: envoy, image: "envoy:b", ready: false, state: {}, lastState: {terminated: {reason: Error}}}]}`,
			true, "container envoy (envoy:b): last terminated: Error"},
		{"still the old image", `{initContainerStatuses: [{name: envoy, image: "envoy:a", ready: true, state: {running: {}}}]}`,
			false, "container envoy (envoy:b): running, its readiness probe failing"},
		{"ready on the new image", `{initContainerStatuses: [{name: envoy, image: "docker.io/library/envoy:b", ready: true, state: {running: {}}}]}`,
			true, "the Pod is not Ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var status map[string]any
			if err := yaml.Unmarshal([]byte(tc.status), &status); err != nil {
				t.Fatal(err)
			}
			pod := &unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "status": status}}
			if got := notReadyWhy(pod, u); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if got := runsImages(pod, u); got != tc.runs {
				t.Errorf("runs the new images: %v, want %v", got, tc.runs)
			}
		})
	}
}

// TestResizeDone: an upgrade that resizes the sidecar waits until the
// kubelet's container status shows the new requests and limits with no
// resize pending or in progress, and fails at once on an infeasible one.
func TestResizeDone(t *testing.T) {
	t.Parallel()
	to := map[string]any{"requests": map[string]any{"cpu": "150m", "memory": "96Mi"}, "limits": map[string]any{"cpu": "1", "memory": "512Mi"}}
	u := rollout.Upgrade{Pod: "web-0", Resources: []rollout.ResourceChange{{Container: "envoy", Init: true, To: to}}}
	const applied = `initContainerStatuses: [{name: envoy, ready: true, resources: {requests: {cpu: 150m, memory: 96Mi}, limits: {cpu: "1", memory: 512Mi}}}]`
	const old = `initContainerStatuses: [{name: envoy, ready: true, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: "1", memory: 512Mi}}}]`
	for _, tc := range []struct {
		name, status    string
		done            bool
		infeasible, why string
	}{
		{"applied", "{" + applied + "}", true, "", "the Pod is not Ready"},
		{"not yet applied", "{" + old + "}", false, "", "container envoy: not resized yet (no resize condition)"},
		{"in progress", "{" + applied + `, conditions: [{type: PodResizeInProgress, status: "True"}]}`, false, "", "the Pod is not Ready"},
		{"deferred", "{" + old + `, conditions: [{type: PodResizePending, status: "True", reason: Deferred, message: "Node didn't have enough capacity"}]}`,
			false, "", "container envoy: not resized yet (PodResizePending Deferred Node didn't have enough capacity)"},
		{"infeasible", "{" + old + `, conditions: [{type: PodResizePending, status: "True", reason: Infeasible, message: "Node didn't have enough capacity"}]}`,
			false, "resize Infeasible: Node didn't have enough capacity", "resize Infeasible: Node didn't have enough capacity"},
		{"applied, the Pod Ready", "{" + applied + `, conditions: [{type: Ready, status: "True"}]}`, true, "", "the Pod is not Ready"},
		{"a condition no longer true", "{" + applied + `, conditions: [{type: PodResizePending, status: "False", reason: Infeasible}]}`, true, "", "the Pod is not Ready"},
		{"no status of the container", "{}", false, "", "container envoy: not resized yet (no resize condition)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var status map[string]any
			if err := yaml.Unmarshal([]byte(tc.status), &status); err != nil {
				t.Fatal(err)
			}
			pod := &unstructured.Unstructured{Object: map[string]any{"kind": "Pod", "status": status}}
			done, infeasible := resizeDone(pod, u)
			if done != tc.done || infeasible != tc.infeasible {
				t.Errorf("done %v, infeasible %q; want %v, %q", done, infeasible, tc.done, tc.infeasible)
			}
			if got := notReadyWhy(pod, u); got != tc.why {
				t.Errorf("why %q, want %q", got, tc.why)
			}
		})
	}
	if done, _ := resizeDone(&unstructured.Unstructured{Object: map[string]any{}}, rollout.Upgrade{Pod: "web-0"}); !done {
		t.Error("an upgrade that resizes nothing waits for a resize")
	}
}
