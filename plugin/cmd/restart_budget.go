package cmd

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// pdbResource is what a PodDisruptionBudget is read as.
var pdbResource = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// waitBudget waits until every PodDisruptionBudget that selects the
// batch's first Pod allows a disruption, and returns how many of the
// batch, from its start, every budget allows at once: a budget that
// selects k of them must allow k disruptions.
func (m *restartMover) waitBudget(ctx context.Context, batch []podUpgrade) (int, error) {
	pod := batch[0].pod
	last, lastMessage := m.now(), ""
	for {
		changed := m.cache.next()
		list, err := m.client.Resource(pdbResource).Namespace(pod.GetNamespace()).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, rollout.Fail(rollout.ReasonAPI, "listing the PodDisruptionBudgets of Pod %s: %w", pod.GetName(), err)
		}
		n, message := budgetAllows(list.Items, batch)
		if n > 0 {
			return n, nil
		}
		if message != lastMessage {
			last, lastMessage = m.now(), message
		}
		if err := m.pause(ctx, changed, last, lastMessage); err != nil {
			return 0, err
		}
	}
}

// budgetAllows is how many Pods of batch, from its start, the
// PodDisruptionBudgets pdbs allow to be disrupted at once, and, when none,
// which budget stops the first ("" otherwise).
func budgetAllows(pdbs []unstructured.Unstructured, batch []podUpgrade) (int, string) {
	taken := make([]int64, len(pdbs))
	for i, b := range batch {
		for j := range pdbs {
			pdb := &pdbs[j]
			if !selects(pdb, b.pod) {
				continue
			}
			allowed, _, _ := unstructured.NestedInt64(pdb.Object, "status", "disruptionsAllowed")
			if taken[j]+1 > allowed {
				if i > 0 {
					return i, ""
				}
				return 0, fmt.Sprintf("PodDisruptionBudget %s allows no disruption of Pod %s", pdb.GetName(), b.pod.GetName())
			}
		}
		for j := range pdbs {
			if selects(&pdbs[j], b.pod) {
				taken[j]++
			}
		}
	}
	return len(batch), ""
}

// selects reports whether a PodDisruptionBudget's selector matches pod.
func selects(pdb, pod *unstructured.Unstructured) bool {
	raw, ok, _ := unstructured.NestedMap(pdb.Object, "spec", "selector")
	if !ok {
		return false
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
		return false
	}
	// policy/v1: an empty selector selects every Pod of the namespace.
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(pod.GetLabels()))
}

// slots is what takeSlots took of the fleet's Pods in flight.
type slots struct {
	n    int
	done func()
}

// takeSlots takes up to want of the fleet's --max-in-flight Pods in
// flight: one, waiting for it, then as many more as are free at once (so
// that two workloads never wait on each other's partial batches).
func (m *restartMover) takeSlots(ctx context.Context, want int) slots {
	if m.slots == nil || want < 1 {
		return slots{n: want, done: func() {}}
	}
	n := 0
	select {
	case m.slots <- struct{}{}:
		n = 1
	case <-ctx.Done():
		// the run is being stopped: one Pod, as before any limit, so the
		// step fails on the context rather than here.
		return slots{n: 1, done: func() {}}
	}
	for n < want {
		select {
		case m.slots <- struct{}{}:
			n++
			continue
		default:
		}
		break
	}
	return slots{n: n, done: func() {
		for range n {
			<-m.slots
		}
	}}
}
