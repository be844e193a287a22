package cmd

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// A terminating Pod (deletionTimestamp set) is neither current nor behind:
// it is going, whatever it runs, and a restart would not change it. On a
// real node it may take its whole grace period (a preStop hook, a slow
// shutdown), so status often sees it at the end of a rollout; the rows
// count it apart, and --check does not count it.

// terminatingPods counts a row's terminating Pods: a workload's, or 1
// for a Pod listed by itself that is terminating.
func terminatingPods(r fleet.Row) int {
	if r.Terminating {
		return 1
	}
	return r.PodsTerminating
}

// terminatingPhrase says what of a row is terminating.
func terminatingPhrase(r fleet.Row) string {
	switch {
	case r.Terminating:
		return "terminating"
	case r.PodsTerminating == 1:
		return "1 Pod terminating"
	}
	return fmt.Sprintf("%d Pods terminating", r.PodsTerminating)
}
