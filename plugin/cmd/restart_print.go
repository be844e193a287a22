package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// restartPrinter writes restart's progress lines on stderr.
type restartPrinter struct {
	w           io.Writer
	mu          sync.Mutex
	signalled   bool
	stopping    bool
	inFlightNow int
}

// event prints a line as a workload starts or ends, with the running count.
func (p *restartPrinter) event(e rollout.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inFlightNow = e.InFlight
	where := fmt.Sprintf("[%d/%d] %s -n %s", e.Index, e.Total, e.Ref(), e.Namespace)
	if e.Started {
		fmt.Fprintf(p.w, "%s: %s started (%d in flight)\n", where, describeAction(e.Step), e.InFlight)
		return
	}
	if e.State == rollout.StateFailed {
		fmt.Fprintf(p.w, "%s: failed after %.1fs: %s: %s (%d of %d done, %d in flight)\n", where, e.Seconds, e.Reason, e.Message, e.Done, e.Total, e.InFlight)
		if !p.stopping {
			p.stopping = true
			fmt.Fprintf(p.w, "restart: starting nothing more; waiting for the %d in flight\n", e.InFlight)
		}
		return
	}
	fmt.Fprintf(p.w, "%s: done in %.1fs (%d of %d done, %d in flight)\n", where, e.Seconds, e.Done, e.Total, e.InFlight)
}

// interrupted says what the first SIGINT does.
func (p *restartPrinter) interrupted() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signalled = true
	fmt.Fprintf(p.w, "restart: interrupted: starting nothing more; waiting for the %d in flight (interrupt again to stop waiting: their controllers finish them)\n", p.inFlightNow)
}

func (p *restartPrinter) wasInterrupted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signalled
}

func describeAction(s rollout.Step) string {
	switch s.Action {
	case rollout.Restart:
		return "rollout restart"
	case rollout.Reinject:
		return "injection of the current template"
	case rollout.DeletePods:
		if s.Inject {
			return fmt.Sprintf("injection of the current template, then deletion of its %d Pods one at a time", s.Pods)
		}
		return fmt.Sprintf("deletion of its %d Pods behind, one at a time", s.PodsBehind)
	case rollout.Wait:
		return "wait for the rollout under way"
	case rollout.Recreate:
		return "recreation of the bare Pod"
	case rollout.InPlace:
		if s.Inject {
			return fmt.Sprintf("injection of the current template, then upgrade in place of its %d Pods one at a time", s.PodsInPlace)
		}
		return fmt.Sprintf("upgrade in place of its %d Pods behind, one at a time", s.PodsInPlace)
	}
	return string(s.Action)
}

// announce says what the run will do, and lists what it leaves alone.
func (o *RestartOptions) announce(steps []rollout.Step) {
	moving, reported := rollout.Count(steps)
	fmt.Fprintf(o.ErrOut, "restart: %d workloads to bring to the current template, at most %d at once; %d left as they are\n", moving, o.MaxInFlight, reported)
	for _, s := range steps {
		if !s.Moves() {
			fmt.Fprintf(o.ErrOut, "%s -n %s: left as it is: %s: %s\n", s.Ref(), s.Namespace, s.Reason, s.Message)
		}
	}
}

// printPlan writes the plan for --dry-run: a table, or JSON.
func (o *RestartOptions) printPlan(steps []rollout.Step) error {
	if steps == nil {
		steps = []rollout.Step{}
	}
	if o.Flags.Output == "json" {
		return printJSON(o.Out, map[string]any{"apiVersion": "kinject.dev/v1alpha1", "kind": "RestartPlan", "maxInFlight": o.MaxInFlight, "items": steps})
	}
	if len(steps) == 0 {
		fmt.Fprintln(o.ErrOut, "Nothing is behind")
		return nil
	}
	w := tabwriter.NewWriter(o.Out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tACTION\tPODS\tBEHIND\tREASON\tSTRATEGY\tWHY")
	for _, s := range steps {
		action := string(s.Action)
		if s.Inject {
			action = "reinject+" + action
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", s.Namespace, s.Ref(), action, s.Pods, s.PodsBehind, orNone(s.Reason), orNone(s.Strategy), orNone(s.StrategyReason))
	}
	moving, _ := rollout.Count(steps)
	fmt.Fprintf(o.ErrOut, "restart (dry run): %d workloads would move, at most %d at once\n", moving, o.MaxInFlight)
	return w.Flush()
}

// restartReport is the -o json report.
func restartReport(res rollout.Result) map[string]any {
	items := res.Outcomes
	if items == nil {
		items = []rollout.Outcome{}
	}
	counts := res.Counts()
	return map[string]any{
		"apiVersion": "kinject.dev/v1alpha1", "kind": "RestartReport",
		"maxInFlight": res.MaxInFlight, "interrupted": res.Interrupted,
		"done": counts[rollout.StateDone], "failed": counts[rollout.StateFailed],
		"notStarted": counts[rollout.StateNotStarted], "reported": counts[rollout.StateReported],
		"items": items,
	}
}

func printJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// builtinMapper maps the kinds restart changes, with no discovery
// request: they are all built in.
func builtinMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, r := range statusResources {
		gvk := r.gvr.GroupVersion().WithKind(kindOf(r.gvr.Resource))
		m.AddSpecific(gvk, r.gvr, r.gvr.GroupVersion().WithResource(strings.TrimSuffix(r.gvr.Resource, "s")), meta.RESTScopeNamespace)
	}
	m.AddSpecific(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicaset"}, meta.RESTScopeNamespace)
	return m
}
