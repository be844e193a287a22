package rollout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func steps(n int) []Step {
	var out []Step
	for i := range n {
		out = append(out, Step{Namespace: "ns", Kind: "Deployment", Group: "apps", Name: fmt.Sprintf("d%02d", i), Action: Restart})
	}
	return out
}

// TestRunBoundsInFlight moves 20 workloads with at most 3 at once: all
// are done, never more than 3 move together, and 3 do.
func TestRunBoundsInFlight(t *testing.T) {
	t.Parallel()
	var now, peak atomic.Int32
	mover := MoverFunc(func(ctx context.Context, s Step) error {
		n := now.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		now.Add(-1)
		return nil
	})
	var events []Event
	r := Runner{Mover: mover, MaxInFlight: 3, Progress: func(e Event) { events = append(events, e) }}
	res := r.Run(context.Background(), append(steps(20), Step{Kind: "Job", Name: "j", Action: Report, Reason: ReasonJob}))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := res.Counts(); got[StateDone] != 20 || got[StateReported] != 1 {
		t.Errorf("counts %v", got)
	}
	if peak.Load() != 3 || res.MaxInFlight != 3 {
		t.Errorf("peak %d, reported max %d; want 3", peak.Load(), res.MaxInFlight)
	}
	if len(events) != 40 {
		t.Errorf("%d events, want a start and an end per workload", len(events))
	}
	last := events[len(events)-1]
	if last.Done != 20 || last.Total != 20 || last.InFlight != 0 {
		t.Errorf("last event %+v", last)
	}
}

// TestRunStopsAtFirstFailure: the failing workload stops new starts, the
// one in flight beside it finishes, the rest are not started, and the
// error names the workload and the reason.
func TestRunStopsAtFirstFailure(t *testing.T) {
	t.Parallel()
	release, d02Started := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var moved []string
	mover := MoverFunc(func(ctx context.Context, s Step) error {
		mu.Lock()
		moved = append(moved, s.Name)
		mu.Unlock()
		switch s.Name {
		case "d01":
			<-d02Started // d00 ended and freed its slot for d02
			return Fail(ReasonProgressDeadline, "deployment %q exceeded its progress deadline", s.Name)
		case "d02":
			close(d02Started)
			<-release // in flight when d01 fails
		}
		return nil
	})
	r := Runner{Mover: mover, MaxInFlight: 2, Progress: func(e Event) {
		if !e.Started && e.Name == "d01" {
			close(release)
		}
	}}
	s := steps(6)
	s[0].Action = Wait
	res := r.Run(context.Background(), s)
	states := ""
	for _, o := range res.Outcomes {
		states += fmt.Sprintf("%s=%s/%s ", o.Name, o.State, o.Reason)
	}
	want := "d00=done/ d01=failed/progress_deadline_exceeded d02=done/ d03=not-started/not_started d04=not-started/not_started d05=not-started/not_started "
	if states != want {
		t.Errorf("outcomes\n got %s\nwant %s", states, want)
	}
	var f *Failure
	if !errors.As(res.Err, &f) || res.Err.Error() != `deployment.apps/d01 in ns: progress_deadline_exceeded: deployment "d01" exceeded its progress deadline` {
		t.Errorf("error: %v", res.Err)
	}
	if len(moved) != 3 {
		t.Errorf("moved %v", moved)
	}
}

// TestRunStop: closing Stop starts nothing more; the steps in flight end.
func TestRunStop(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	var once sync.Once
	mover := MoverFunc(func(ctx context.Context, s Step) error {
		once.Do(func() { close(stop) })
		time.Sleep(10 * time.Millisecond)
		return nil
	})
	res := (&Runner{Mover: mover, MaxInFlight: 2, Stop: stop}).Run(context.Background(), steps(5))
	c := res.Counts()
	if !res.Interrupted || res.Err != nil || c[StateDone] < 1 || c[StateDone] > 2 || c[StateNotStarted] != 5-c[StateDone] {
		t.Errorf("interrupted=%v err=%v counts=%v", res.Interrupted, res.Err, c)
	}
	for _, o := range res.Outcomes {
		if o.State == StateNotStarted && o.Reason != ReasonInterrupted {
			t.Errorf("%s: reason %q", o.Name, o.Reason)
		}
	}
}
