package cmd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestBudgetAllows: each PodDisruptionBudget must allow as many
// disruptions as the batch's Pods it selects; the batch is cut before the
// first Pod that would go over, and a budget of 0 names itself.
func TestBudgetAllows(t *testing.T) {
	t.Parallel()
	pdb := func(name, selector string, allowed int) unstructured.Unstructured {
		return *decode(t, fmt.Sprintf("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: %s, namespace: ns}\nspec: {selector: {matchLabels: {%s}}}\nstatus: {disruptionsAllowed: %d}", name, selector, allowed))
	}
	pod := func(name, app string) podUpgrade {
		p := drainPodObject(t, name, true)
		p.SetLabels(map[string]string{"app": app})
		return podUpgrade{u: rollout.Upgrade{Pod: name}, pod: p}
	}
	batch := []podUpgrade{pod("web-c", "web"), pod("web-b", "web"), pod("web-a", "web")}
	for _, tc := range []struct {
		name string
		pdbs []unstructured.Unstructured
		want int
		msg  string
	}{
		{"none", nil, 3, ""},
		{"allows 2", []unstructured.Unstructured{pdb("web", "app: web", 2)}, 2, ""},
		{"allows 5", []unstructured.Unstructured{pdb("web", "app: web", 5)}, 3, ""},
		{"two budgets, the smaller wins", []unstructured.Unstructured{pdb("web", "app: web", 3), pdb("strict", "app: web", 1)}, 1, ""},
		{"allows none", []unstructured.Unstructured{pdb("web", "app: web", 0)}, 0, "PodDisruptionBudget web allows no disruption of Pod web-c"},
		{"another app's", []unstructured.Unstructured{pdb("db", "app: db", 0)}, 3, ""},
	} {
		got, msg := budgetAllows(tc.pdbs, batch)
		if got != tc.want || msg != tc.msg {
			t.Errorf("%s: %d %q, want %d %q", tc.name, got, msg, tc.want, tc.msg)
		}
	}
}

// TestTakeSlots: a batch takes one slot waiting, then only those free;
// released slots serve the next batch; without a bound it takes all.
func TestTakeSlots(t *testing.T) {
	t.Parallel()
	m := &restartMover{slots: make(chan struct{}, 3)}
	first := m.takeSlots(context.Background(), 5)
	if first.n != 3 {
		t.Fatalf("took %d of 3 free, want 3", first.n)
	}
	got := make(chan slots)
	go func() { got <- m.takeSlots(context.Background(), 2) }()
	select {
	case s := <-got:
		t.Fatalf("took %d while none was free", s.n)
	case <-time.After(50 * time.Millisecond):
	}
	first.done()
	second := <-got
	if second.n < 1 || second.n > 2 {
		t.Errorf("after the release, took %d, want 1 or 2", second.n)
	}
	second.done()
	if n := m.takeSlots(context.Background(), 2).n; n != 2 {
		t.Errorf("with 3 free, took %d of 2", n)
	}
	if n := (&restartMover{}).takeSlots(context.Background(), 7).n; n != 7 {
		t.Errorf("without a bound, took %d, want 7", n)
	}
	// none free (2 taken above, one more now): a stopped run takes one
	// and lets the step fail on its context
	if s := m.takeSlots(context.Background(), 0); s.n != 0 || len(m.slots) != 2 {
		t.Errorf("none wanted: took %d, %d of 3 slots taken; want 0 and 2", s.n, len(m.slots))
	}
	if s := m.takeSlots(context.Background(), 1); s.n != 1 || len(m.slots) != 3 {
		t.Errorf("one wanted: took %d, %d of 3 slots taken; want 1 and 3", s.n, len(m.slots))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := m.takeSlots(ctx, 4); s.n != 1 {
		t.Errorf("stopped, took %d, want 1", s.n)
	}
}

// TestWaitBudget: a batch that its PodDisruptionBudget allows no
// disruption of waits until the budget allows some, then takes that many.
func TestWaitBudget(t *testing.T) {
	t.Parallel()
	budget := decode(t, "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: ns}\nspec: {selector: {matchLabels: {app: web}}}\nstatus: {disruptionsAllowed: 0}")
	m, client, _, _ := fakeMover(t, budget)
	var batch []podUpgrade
	for _, name := range []string{"web-a", "web-b", "web-c"} {
		p := drainPodObject(t, name, true)
		p.SetLabels(map[string]string{"app": "web"})
		batch = append(batch, podUpgrade{u: rollout.Upgrade{Pod: name}, pod: p})
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		allows := budget.DeepCopy()
		_ = unstructured.SetNestedField(allows.Object, int64(2), "status", "disruptionsAllowed")
		if err := client.Tracker().Update(pdbResource, allows, "ns"); err != nil {
			t.Error(err)
		}
	}()
	n, err := m.waitBudget(bounded(t, 10*time.Second), batch)
	if n != 2 || err != nil {
		t.Errorf("%d allowed (%v), want 2 once the budget allows them", n, err)
	}
}
