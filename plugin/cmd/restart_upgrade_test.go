package cmd

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestUpgradePodResizeAloneNotDrained: an upgrade that changes no image
// restarts no sidecar, so the Pod is not drained.
func TestUpgradePodResizeAloneNotDrained(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, client, _, proxy := fakeMover(t, pod)
	client.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, pod, nil
	})
	gets := 0
	client.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		gets++
		return false, nil, nil
	})
	u := rollout.Upgrade{Namespace: "ns", Pod: "web-a", RecordKey: "r", MarkerKey: "m"}
	if err := m.upgradePod(context.Background(), u, pod); err != nil {
		t.Fatal(err)
	}
	// Not drained: patched as it was judged, not read again.
	if got := proxy.called(); len(got) != 0 || gets != 0 {
		t.Errorf("calls %v and %d GETs, want none", got, gets)
	}
	u.Images = []rollout.ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}
	_ = m.upgradePod(context.Background(), u, pod)
	if got := proxy.called(); len(got) == 0 || !strings.HasSuffix(got[0], testDrain.Fail) {
		t.Errorf("with an image change, calls %v, want the drain first", got)
	}
}
