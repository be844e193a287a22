package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/plugin/local"
)

// runLive resolves the arguments to objects, processes them with bounded
// concurrency, prints one line per object in input order, and then the
// objects for --output.
func (o *Options) runLive(ctx context.Context) error {
	if err := o.checkCluster(ctx); err != nil {
		return err
	}
	targets, resolveErrs := o.targets()
	for _, err := range resolveErrs {
		fmt.Fprintf(o.ErrOut, "error: %v\n", err)
	}
	if len(targets) == 0 && len(resolveErrs) == 0 {
		fmt.Fprintln(o.ErrOut, "No resources found")
		return nil
	}
	p, err := o.patcher()
	if err != nil {
		return err
	}
	results := o.process(ctx, p, targets)
	failed, changed := len(resolveErrs), 0
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
			return local.DiffChanged(differ, "objects")
		}
	}
	total := len(targets) + len(resolveErrs)
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
		dryRun = live.DryRunClient
	case o.Diff:
		// As kubectl diff: the server computes the result, nothing is stored.
		dryRun = live.DryRunServer
	}
	return &live.Patcher{
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

// targets resolves the arguments with kubectl's resource builder. Objects
// that were read from the server are passed on to save a GET; objects read
// from files are looked up by name.
func (o *Options) targets() ([]live.Target, []error) {
	// "-" is read from the injected stdin, not os.Stdin.
	files := resource.FilenameOptions{Recursive: o.Recursive}
	stdin := false
	for _, f := range o.Filenames {
		if f == "-" {
			stdin = true
		} else {
			files.Filenames = append(files.Filenames, f)
		}
	}
	b := resource.NewBuilder(o.ConfigFlags).
		Unstructured().
		ContinueOnError().
		NamespaceParam(o.namespace).DefaultNamespace().AllNamespaces(o.AllNamespaces).
		FilenameParam(o.enforceNamespace, &files)
	if stdin {
		b = b.Stream(o.In, "STDIN")
	}
	r := b.LabelSelectorParam(o.Selector).
		ResourceTypeOrNameArgs(o.All, o.args...).
		RequireObject(true).
		Flatten().
		Do()
	var targets []live.Target
	err := r.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		t := live.Target{Mapping: info.Mapping, Namespace: info.Namespace, Name: info.Name}
		if u, ok := info.Object.(*unstructured.Unstructured); ok && u.GetResourceVersion() != "" {
			t.Object = u
		}
		targets = append(targets, t)
		return nil
	})
	return targets, flatten(err)
}

// flatten splits an aggregate error into its parts.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) {
		var out []error
		for _, e := range agg.Errors() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// process runs p on every target with at most o.Concurrency at once and
// prints each result line as soon as all earlier ones are printed, so the
// output is in input order. The client's QPS and burst limits are shared by
// all workers.
func (o *Options) process(ctx context.Context, p *live.Patcher, targets []live.Target) []live.Result {
	results := make([]live.Result, len(targets))
	done := make([]bool, len(targets))
	var (
		mu      sync.Mutex
		next    int
		wg      sync.WaitGroup
		workers = make(chan struct{}, o.Concurrency)
	)
	for i, t := range targets {
		wg.Add(1)
		workers <- struct{}{}
		go func() {
			defer wg.Done()
			r := p.Process(ctx, t)
			<-workers
			mu.Lock()
			defer mu.Unlock()
			results[i], done[i] = r, true
			for next < len(targets) && done[next] {
				o.printResult(results[next])
				next++
			}
		}()
	}
	wg.Wait()
	return results
}

func (o *Options) printResult(r live.Result) {
	for _, w := range r.Warnings {
		fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
	}
	line := r.String()
	if o.AllNamespaces && r.Namespace != "" {
		line = r.Namespace + ": " + line
	}
	if o.Check && r.Changed() {
		line = r.Ref + " would be " + string(r.Action)
	}
	fmt.Fprintln(o.ErrOut, line)
}
