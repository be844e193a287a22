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
