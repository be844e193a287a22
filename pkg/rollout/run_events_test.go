package rollout

import (
	"context"
	"errors"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/reason"
)

// TestRunEventIndex numbers the steps that move from 1, leaving out
// those reported.
func TestRunEventIndex(t *testing.T) {
	t.Parallel()
	plan := steps(3)
	plan = append(plan[:1], append([]Step{{Kind: "Job", Name: "j", Action: Report, Reason: ReasonJob}}, plan[1:]...)...)
	var started []int
	r := Runner{Mover: MoverFunc(func(context.Context, Step) error { return nil }), MaxInFlight: 1, Progress: func(e Event) {
		if e.Started {
			started = append(started, e.Index)
		}
	}}
	if res := r.Run(context.Background(), plan); res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(started) != 3 || started[0] != 1 || started[1] != 2 || started[2] != 3 {
		t.Errorf("started %v, want [1 2 3]", started)
	}
}

// TestRunFailureReason: a Move error without a reason of its own is an
// API error, or an interruption once the run's context is done.
func TestRunFailureReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cancel bool
		want   reason.Code
	}{
		{"running", false, ReasonAPI},
		{"stopped", true, ReasonInterrupted},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		r := Runner{Mover: MoverFunc(func(context.Context, Step) error {
			if tc.cancel {
				cancel()
			}
			return errors.New("connection refused")
		})}
		res := r.Run(ctx, steps(1))
		cancel()
		if o := res.Outcomes[0]; o.State != StateFailed || o.Reason != tc.want {
			t.Errorf("%s: %s %s, want %s %s", tc.name, o.State, o.Reason, StateFailed, tc.want)
		}
	}
}
