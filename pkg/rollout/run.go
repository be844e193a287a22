package rollout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kinject/kubectl-inject/pkg/reason"
)

// DefaultMaxInFlight is how many workloads move at once unless told.
const DefaultMaxInFlight = 3

// Mover changes one workload and waits until its rollout completes
// (or fails). It must return once ctx is done.
type Mover interface {
	Move(ctx context.Context, s Step) error
}

// MoverFunc adapts a function to Mover.
type MoverFunc func(ctx context.Context, s Step) error

// Move calls f.
func (f MoverFunc) Move(ctx context.Context, s Step) error { return f(ctx, s) }

// Failure is a Move error with a reason code (ReasonProgressDeadline, ...).
type Failure struct {
	Reason reason.Code
	Err    error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// Fail returns a Failure of code.
func Fail(code reason.Code, format string, args ...any) error {
	return &Failure{Reason: code, Err: fmt.Errorf(format, args...)}
}

// States of an Outcome.
const (
	StateDone       = "done"
	StateFailed     = "failed"
	StateNotStarted = "not-started"
	StateReported   = "reported"
)

// Outcome is what became of one step.
type Outcome struct {
	Step
	State string `json:"state"`
	// Seconds is how long the step took, from its start.
	Seconds float64 `json:"seconds,omitempty"`
}

// Event is a line of progress: a step started or ended.
type Event struct {
	Outcome
	// Started is set when the step starts; otherwise it ended.
	Started bool
	// Index is the step's number among those that move (1-based); Total
	// how many move; Done and InFlight the counts after the event.
	Index, Total, Done, InFlight int
	Err                          error
}

// Runner runs a plan in waves.
type Runner struct {
	Mover Mover
	// MaxInFlight bounds the workloads moving at once (DefaultMaxInFlight
	// when 0).
	MaxInFlight int
	// Progress, when set, is called (from one goroutine at a time) as each
	// step starts and ends.
	Progress func(Event)
	// Stop, when closed, stops new starts as a failure does: the steps in
	// flight go on to their end (the command closes it on SIGINT).
	Stop <-chan struct{}
}

// Result is the outcome of a run.
type Result struct {
	Outcomes []Outcome `json:"items"`
	// MaxInFlight is the largest number of steps that moved at once.
	MaxInFlight int `json:"maxInFlight"`
	// Interrupted: Stop was closed (or ctx done) before every step started.
	Interrupted bool `json:"interrupted,omitempty"`
	// Err joins the failures, each naming its workload and reason.
	Err error `json:"-"`
}

// Counts sums the outcomes by state.
func (r Result) Counts() map[string]int {
	out := map[string]int{}
	for _, o := range r.Outcomes {
		out[o.State]++
	}
	return out
}

// Run moves the steps in order, at most MaxInFlight at once. The first
// failure stops new starts; the steps in flight go on to their end. The
// steps never started are StateNotStarted with ReasonNotStarted (after a
// failure) or ReasonInterrupted (Stop closed, ctx done).
func (r *Runner) Run(ctx context.Context, steps []Step) Result {
	limit := r.MaxInFlight
	if limit <= 0 {
		limit = DefaultMaxInFlight
	}
	res := Result{Outcomes: make([]Outcome, len(steps))}
	total, _ := Count(steps)
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		failed   bool
		inFlight int
		done     int
		errs     []error
		slots    = make(chan struct{}, limit)
		index    int
	)
	emit := func(e Event) {
		if r.Progress != nil {
			r.Progress(e)
		}
	}
	stopped := func() reason.Code {
		mu.Lock()
		defer mu.Unlock()
		if failed {
			return ReasonNotStarted
		}
		select {
		case <-r.Stop:
			return ReasonInterrupted
		case <-ctx.Done():
			return ReasonInterrupted
		default:
			return ""
		}
	}
	for i, s := range steps {
		res.Outcomes[i] = Outcome{Step: s}
		if !s.Moves() {
			res.Outcomes[i].State = StateReported
			continue
		}
		index++
		// Wait for a slot, unless the run stops meanwhile.
		acquired := false
		select {
		case slots <- struct{}{}:
			acquired = true
		case <-r.Stop:
		case <-ctx.Done():
		}
		if why := stopped(); why != "" {
			if acquired {
				<-slots
			}
			res.Outcomes[i].State, res.Outcomes[i].Reason = StateNotStarted, why
			if why == ReasonInterrupted {
				res.Interrupted = true
			}
			continue
		}
		mu.Lock()
		inFlight++
		res.MaxInFlight = max(res.MaxInFlight, inFlight)
		n := index
		emit(Event{Outcome: res.Outcomes[i], Started: true, Index: n, Total: total, Done: done, InFlight: inFlight})
		mu.Unlock()
		wg.Add(1)
		go func(i int, s Step) {
			defer wg.Done()
			start := time.Now()
			err := r.Mover.Move(ctx, s)
			mu.Lock()
			defer mu.Unlock()
			o := &res.Outcomes[i]
			o.Seconds = time.Since(start).Round(time.Millisecond).Seconds()
			if err != nil {
				o.State, o.Reason, o.Message = StateFailed, reasonOf(err, ctx), err.Error()
				failed = true
				errs = append(errs, fmt.Errorf("%s in %s: %s: %w", s.Ref(), s.Namespace, o.Reason, err))
			} else {
				o.State = StateDone
				done++
			}
			inFlight--
			emit(Event{Outcome: *o, Index: n, Total: total, Done: done, InFlight: inFlight, Err: err})
			<-slots
		}(i, s)
	}
	wg.Wait()
	res.Err = errors.Join(errs...)
	return res
}

func reasonOf(err error, ctx context.Context) reason.Code {
	var f *Failure
	if errors.As(err, &f) {
		return f.Reason
	}
	if ctx.Err() != nil {
		return ReasonInterrupted
	}
	return ReasonAPI
}
