package cmd

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkBudgets warns about the PodDisruptionBudgets of the matched
// namespaces that allow no disruption now: kubectl inject restart waits on
// the Pods they select (an upgrade in place, like an eviction, takes a
// Pod out of its Services' endpoints) until they do, and stops at
// --progress-deadline.
func (o *CheckOptions) checkBudgets(ctx context.Context, c *checkClients, namespaces []string) {
	const category = "workloads"
	var blocked []string
	for _, ns := range namespaces {
		list, err := c.dynamic.Resource(pdbResource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			o.add(category, checkWarn, fmt.Sprintf("cannot list poddisruptionbudgets in %s: %s", ns, readError(err)), "")
			return
		}
		for i := range list.Items {
			if blocks(&list.Items[i]) {
				blocked = append(blocked, "poddisruptionbudget/"+list.Items[i].GetName()+" in "+ns)
			}
		}
	}
	if len(blocked) == 0 {
		return
	}
	shown := blocked
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("%d more", len(blocked)-3))
	}
	o.add(category, checkWarn, fmt.Sprintf("%d PodDisruptionBudgets allow no disruption (%s): kubectl inject restart waits on the Pods they select until they do",
		len(blocked), strings.Join(shown, ", ")), "kubectl get pdb -A shows ALLOWED DISRUPTIONS; raise maxUnavailable, or wait for their Pods to be Ready")
}

// blocks reports a PodDisruptionBudget that selects Pods and allows no
// disruption of them now.
func blocks(pdb *unstructured.Unstructured) bool {
	expected, _, _ := unstructured.NestedInt64(pdb.Object, "status", "expectedPods")
	allowed, _, _ := unstructured.NestedInt64(pdb.Object, "status", "disruptionsAllowed")
	return expected > 0 && allowed < 1
}
