package rollout

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestRunDefaultInFlight: a MaxInFlight of 0 or less moves
// DefaultMaxInFlight workloads at once, neither fewer nor more. The first
// ones hold their slots until that many have started, so the peak is
// exact (a run that starts none stops at the context's deadline).
func TestRunDefaultInFlight(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, -1} {
		var (
			mu      sync.Mutex
			started int
			full    = make(chan struct{})
		)
		mover := MoverFunc(func(ctx context.Context, s Step) error {
			mu.Lock()
			started++
			if started == DefaultMaxInFlight {
				close(full)
			}
			mu.Unlock()
			select {
			case <-full:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		r := Runner{Mover: mover, MaxInFlight: limit}
		res := r.Run(ctx, steps(2*DefaultMaxInFlight))
		cancel()
		if res.Err != nil || res.Interrupted {
			t.Fatalf("MaxInFlight %d: %v (interrupted %v)", limit, res.Err, res.Interrupted)
		}
		if got := res.Counts()[StateDone]; got != 2*DefaultMaxInFlight {
			t.Errorf("MaxInFlight %d: %d done, want %d", limit, got, 2*DefaultMaxInFlight)
		}
		if res.MaxInFlight != DefaultMaxInFlight {
			t.Errorf("MaxInFlight %d: %d moved at once, want %d", limit, res.MaxInFlight, DefaultMaxInFlight)
		}
	}
}
