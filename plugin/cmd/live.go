package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/config"

	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// runLive resolves the arguments to objects, processes them with bounded
// concurrency, prints one line per object in input order, and then the
// objects for --output.
func (o *Options) runLive(ctx context.Context) error {
	if err := o.checkCluster(ctx); err != nil {
		return err
	}
	targets, err := o.targets()
	if err != nil {
		return err
	}
	targets = o.guardSystemNamespaces(targets)
	if len(targets) == 0 && len(o.Filenames) > 0 {
		// As kubectl apply and --local: files with no object are a mistake.
		what := "no objects to inject in " + strings.Join(o.Filenames, ", ")
		if o.Selector != "" {
			what += " whose labels match " + o.Selector
		}
		return &ExitError{Code: 1, Err: errors.New(what)}
	}
	if len(targets) == 0 {
		fmt.Fprintln(o.ErrOut, "No resources found")
		return nil
	}
	p, err := o.patcher()
	if err != nil {
		return err
	}
	results := o.process(ctx, p, targets)
	failed, changed := 0, 0
	for _, r := range results {
		if r.Failed() {
			failed++
		} else if r.Changed() {
			changed++
		}
	}
	if err := o.printObjects(results); err != nil {
		return err
	}
	if o.Diff {
		differ, err := o.printDiffs(results)
		if err != nil {
			return err
		}
		if failed == 0 && differ > 0 {
			return config.DiffChanged(differ, "objects")
		}
	}
	total := len(targets)
	switch {
	case failed > 0:
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed", failed, total)}
	case o.Check && changed > 0:
		return &ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d objects are not current", changed, total)}
	}
	return nil
}

// patcher builds the live patcher from the flags.
func (o *Options) patcher() (*live.Patcher, error) {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	mapper, err := o.ConfigFlags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	dryRun := o.dryRun
	switch {
	case o.Check:
		dryRun = dryrun.Client
	case o.Diff:
		// As kubectl diff: the server computes the result, nothing is stored.
		dryRun = dryrun.Server
	}
	var refs *live.ReferenceChecker
	if !o.AllowMissingReferences {
		refs = &live.ReferenceChecker{Client: client}
	}
	return &live.Patcher{
		References:     refs,
		Injector:       o.injector,
		Op:             o.Op(),
		Client:         client,
		Mapper:         mapper,
		DryRun:         dryRun,
		ServerSide:     o.ServerSide,
		ForceConflicts: o.ForceConflicts,
		FieldManager:   o.FieldManager,
		Recreate:       o.Recreate,
	}, nil
}

// process runs p on every target with at most o.Concurrency at once and
// prints each result line as soon as all earlier ones are printed, so the
// output is in input order. A target that is already settled (an object
// of a file that cannot be looked up) is not sent to p. The client's QPS
// and burst limits are shared by all workers.
func (o *Options) process(ctx context.Context, p *live.Patcher, targets []target) []live.Result {
	results := make([]live.Result, len(targets))
	done := make([]bool, len(targets))
	var (
		mu      sync.Mutex
		next    int
		wg      sync.WaitGroup
		workers = make(chan struct{}, o.Concurrency)
	)
	finish := func(i int, r live.Result) {
		mu.Lock()
		defer mu.Unlock()
		results[i], done[i] = r, true
		for next < len(targets) && done[next] {
			o.printResult(targets[next], results[next])
			next++
		}
	}
	for i, t := range targets {
		if t.settled != nil {
			finish(i, *t.settled)
			continue
		}
		wg.Add(1)
		workers <- struct{}{}
		go func() {
			defer wg.Done()
			r := p.Process(ctx, t.Target)
			<-workers
			finish(i, r)
		}()
	}
	wg.Wait()
	return results
}

func (o *Options) printResult(t target, r live.Result) {
	if t.settled != nil {
		fmt.Fprintln(o.ErrOut, t.line)
		return
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
	line := o.resultLine(r)
	if r.Failed() && t.fileAt != "" && r.Message == t.fileError {
		line = t.fileAt + " " + line
	}
	fmt.Fprintln(o.ErrOut, line)
}

// resultLine is the line printed for one object.
func (o *Options) resultLine(r live.Result) string {
	line := r.String()
	if o.AllNamespaces && r.Namespace != "" {
		line = r.Namespace + ": " + line
	}
	if o.Check && r.Changed() {
		line = r.Ref + " would be " + string(r.Action)
	}
	return line
}
