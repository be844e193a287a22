package rollout

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestCount sums a plan: the steps that move workloads, and those
// reported.
func TestCount(t *testing.T) {
	t.Parallel()
	plan := []Step{
		{Action: Restart}, {Action: Report, Reason: ReasonJob}, {Action: InPlace},
		{Action: Report, Reason: inject.ReasonBarePod}, {Action: Report, Reason: ReasonJob}, {Action: Wait},
	}
	if moving, reported := Count(plan); moving != 3 || reported != 3 {
		t.Errorf("%d moving, %d reported; want 3 and 3", moving, reported)
	}
	if moving, reported := Count(nil); moving != 0 || reported != 0 {
		t.Errorf("an empty plan: %d moving, %d reported", moving, reported)
	}
}
