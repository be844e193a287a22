package static

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestFirstPodsAfterRestart restarts the API server and creates Pods in
// both namespaces from the moment /readyz answers: the static policy
// injects every one (it is loaded before the server serves); the policy
// installed through the API, for comparison, is reported: a Pod it
// missed (created without a sidecar) or that was refused while its
// informer synced.
func TestFirstPodsAfterRestart(t *testing.T) {
	setup(t)
	ctx := context.Background()
	for _, ns := range []string{staticNS, apiNS} {
		got, err := createPod(ctx, t, ns, simplePod("before-restart"))
		if err != nil || injected(got) != "injected" {
			t.Fatalf("%s: before the restart the Pod is not injected (%v)", ns, err)
		}
	}
	c.StopAPIServer()
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	ready := time.Now()
	counts, firstAPI := createFor(t, "after-restart", ready, 5*time.Second)
	t.Logf("Pods created in the 5 s after /readyz: static policy %v; policy installed through the API %v (its first injection %v after /readyz)",
		counts[staticNS], counts[apiNS], firstAPI.Round(time.Millisecond))
	s := counts[staticNS]
	if s["missed"] != 0 || s["refused"] != 0 || s["injected"] == 0 {
		t.Errorf("static policy: %v; want every Pod injected", s)
	}
	if a := counts[apiNS]; a["injected"]+a["missed"]+a["refused"] != s["injected"] {
		t.Errorf("the two namespaces got %d and %d Pods", s["injected"], a["injected"]+a["missed"]+a["refused"])
	}
}

// TestFirstPodsAfterBootstrap is a control plane coming up without the
// policy's API objects (a new cluster, a restore, an etcd replaced): they
// are applied the moment /readyz answers, as a bootstrap or GitOps tool
// would. Pods created meanwhile in the API policy's namespace are counted
// as missed until it injects; the static policy misses none.
func TestFirstPodsAfterBootstrap(t *testing.T) {
	setup(t)
	ctx := context.Background()
	if _, stderr, code := kubectlInject(t, "policy", "--delete", "--name", apiName); code != 0 {
		t.Fatal(stderr)
	}
	c.StopAPIServer()
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	ready := time.Now()
	applied := make(chan time.Duration, 1)
	go func() {
		_, _, code := kubectlInject(t, "policy", "--apply", "--name", apiName, "--namespaces", apiNS)
		if code != 0 {
			applied <- -1
			return
		}
		applied <- time.Since(ready)
	}()
	counts, firstAPI := createFor(t, "bootstrap", ready, 5*time.Second)
	appliedAt := <-applied
	t.Logf("Pods created in the 5 s after /readyz, the API policy applied %v after it: static policy %v; through the API %v (its first injection %v after /readyz)",
		appliedAt.Round(time.Millisecond), counts[staticNS], counts[apiNS], firstAPI.Round(time.Millisecond))
	if appliedAt < 0 {
		t.Fatal("policy --apply failed")
	}
	if s := counts[staticNS]; s["missed"] != 0 || s["refused"] != 0 || s["injected"] == 0 {
		t.Errorf("static policy: %v; want every Pod injected", s)
	}
	if counts[apiNS]["missed"] == 0 {
		t.Errorf("through the API: %v; a policy applied after /readyz misses the Pods created before it is active", counts[apiNS])
	}
}

// createFor creates a Pod in each of staticNS and apiNS, in turn, until
// d has passed since from, and counts what admission did to each:
// injected, missed (created without the sidecar) or refused; and when the
// policy of apiNS first injected.
func createFor(t *testing.T, prefix string, from time.Time, d time.Duration) (map[string]map[string]int, time.Duration) {
	ctx := context.Background()
	counts := map[string]map[string]int{staticNS: {}, apiNS: {}}
	var firstAPI time.Duration = -1
	for i := 0; time.Since(from) < d; i++ {
		for _, ns := range []string{staticNS, apiNS} {
			got, err := createPod(ctx, t, ns, simplePod(fmt.Sprintf("%s-%d", prefix, i)))
			outcome := "missed"
			switch {
			case err != nil:
				outcome = "refused"
			case injected(got) == "injected":
				outcome = "injected"
				if ns == apiNS && firstAPI < 0 {
					firstAPI = time.Since(from)
				}
			}
			counts[ns][outcome]++
		}
	}
	return counts, firstAPI
}
