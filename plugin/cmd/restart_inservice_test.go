package cmd

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// The restart drain's waits on EndpointSlices, on the fake cluster of
// restart_drain_test.go.

// TestWaitInService: after the swap, the Pod must be listed ready as many
// times as before its drain; a Pod listed nowhere is not waited on.
func TestWaitInService(t *testing.T) {
	t.Parallel()
	pod := drainPodObject(t, "web-a", true)
	m, _, clock, _ := fakeMover(t, pod, sliceObject(t, map[string]bool{"web-a": true}))
	if err := m.waitInService(context.Background(), &drained{pod: pod, listed: 1}); err != nil {
		t.Errorf("listed ready once, as before: %v", err)
	}
	start := clock.now()
	if err := m.waitInService(context.Background(), &drained{pod: pod, listed: 2}); err == nil ||
		err.Error() != "Ready on its new sidecar, but its EndpointSlices list it ready 1 times of 2 after 10s" {
		t.Errorf("listed ready once of twice: %v", err)
	}
	// It waited out the deadline, polling, before it gave up.
	if waited := clock.now().Sub(start); waited <= 10*time.Second || waited > 10*time.Second+drainPoll {
		t.Errorf("gave up after %s, want just past the 10s deadline", waited)
	}
	if err := m.waitInService(context.Background(), &drained{pod: pod}); err != nil {
		t.Errorf("listed nowhere: %v", err)
	}
}

// TestEndpointSlicesShared: the Pods drained at once share one LIST of
// their namespace's EndpointSlices for drainPoll; after it, the next read
// lists again.
func TestEndpointSlicesShared(t *testing.T) {
	t.Parallel()
	m, client, clock, _ := fakeMover(t, sliceObject(t, map[string]bool{"web-a": true}))
	lists := 0
	client.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		return false, nil, nil
	})
	for range 3 {
		if s, err := m.endpointSlices(context.Background(), "ns"); err != nil || len(s) != 1 {
			t.Fatalf("%d slices, %v", len(s), err)
		}
	}
	if lists != 1 {
		t.Errorf("%d LISTs within %s, want 1", lists, drainPoll)
	}
	clock.after(drainPoll)
	if _, err := m.endpointSlices(context.Background(), "ns"); err != nil || lists != 2 {
		t.Errorf("%d LISTs after %s, want 2 (%v)", lists, drainPoll, err)
	}
}

// TestRestoreOutlivesTheRun: a drain is undone even once the run is
// being stopped, with 30 s of its own for the proxy to answer.
func TestRestoreOutlivesTheRun(t *testing.T) {
	t.Parallel()
	m, _, _, proxy := fakeMover(t)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.restore(stopped, &drained{pod: drainPodObject(t, "web-a", false)}); err != nil {
		t.Fatal(err)
	}
	if got := proxy.called(); len(got) != 1 || got[0] != "POST ns/web-a:9901/healthcheck/ok" {
		t.Fatalf("calls %v, want the restore", got)
	}
	if left := proxy.left[0]; left < 29*time.Second || left > 30*time.Second {
		t.Errorf("the restore had %v left, want 30s of its own", left)
	}
}
