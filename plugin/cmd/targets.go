package cmd

import (
	"errors"
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/config"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/report"
)

// target is one object to process, or one that is settled before any
// request: an object of a file that cannot be looked up, or an argument
// kubectl's builder could not resolve. A settled target has its result
// and its report line already.
type target struct {
	live.Target
	settled *live.Result
	line    string
	// fileError is the error the core finds in the file's copy of the
	// object, and fileAt where its field is in the file: a live error of
	// the same message is reported there.
	fileError, fileAt string
}

// targets resolves the arguments: -f inputs are read as --local reads
// them (see fileTargets), names and types with kubectl's resource builder.
// The error is about the input as a whole (a missing file).
func (o *Options) targets() ([]target, error) {
	if len(o.Filenames) > 0 {
		return o.fileTargets()
	}
	return o.builderTargets(), nil
}

// fileTargets reads the -f inputs with the same reader as --local, so
// every object of every document is either looked up in the cluster by
// name (as kubectl does with the objects of files) or reported where it is
// in its file, the way --local reports it:
//
//	app.yaml:18:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content
//
// A document that does not parse takes no other document with it.
// --selector filters the objects by the labels written in the file, as
// kubectl's builder does.
func (o *Options) fileTargets() ([]target, error) {
	var selector labels.Selector
	if o.Selector != "" {
		var err error
		if selector, err = labels.Parse(o.Selector); err != nil {
			return nil, fmt.Errorf("the selector %q is not valid: %w", o.Selector, err)
		}
	}
	mapper, err := o.ConfigFlags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var targets []target
	fields := &fieldErrors{injector: o.injector, op: o.Op()}
	err = o.local.ReadObjects(&o.Flags, o.In, func(obj config.FileObject) {
		if obj.Entry.Action == "" {
			if selector != nil && !selector.Matches(labels.Set(obj.Labels)) {
				return
			}
			fe, at, hasError := fields.of(obj)
			if hasError && fe.Reason == inject.ReasonInvalidObject {
				// The file's object is not one the cluster would accept.
				e := obj.Entry
				e.Action, e.Reason, e.Message, e.Line, e.Column = fe.Action, fe.Reason, fe.Message, fe.Line, fe.Column
				targets = append(targets, target{
					settled: &live.Result{Ref: report.Object(e), Namespace: e.Namespace, Action: e.Action, Reason: e.Reason, Message: e.Message},
					line:    report.Error(obj.File, obj.Document, e),
				})
				return
			}
			t, err := o.fileTarget(mapper, obj.Entry)
			if err == nil {
				tg := target{Target: t}
				if hasError {
					tg.fileError, tg.fileAt = fe.Message, at
				}
				targets = append(targets, tg)
				return
			}
			obj = obj.Fail(err)
		}
		e := obj.Entry
		targets = append(targets, target{
			settled: &live.Result{Ref: report.Object(e), Namespace: e.Namespace, Action: e.Action, Reason: e.Reason, Message: e.Message},
			line:    obj.Line(),
		})
	})
	return targets, err
}

// fileTarget finds the resource of the object e names and its namespace,
// as kubectl's builder does for objects of files: the object's own, else
// the namespace of the flags or the kubeconfig; with --namespace given, an
// object of another namespace is an error.
func (o *Options) fileTarget(mapper meta.RESTMapper, e inject.Entry) (live.Target, error) {
	gv, err := schema.ParseGroupVersion(e.APIVersion)
	if err != nil {
		return live.Target{}, fmt.Errorf("apiVersion: %w", err)
	}
	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: e.Kind}, gv.Version)
	switch {
	case meta.IsNoMatchError(err):
		return live.Target{}, fmt.Errorf("%w (is its CustomResourceDefinition installed?)", err)
	case err != nil:
		return live.Target{}, err
	}
	t := live.Target{Mapping: mapping, Name: e.Name}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return t, nil
	}
	ns := o.namespace
	if o.AllNamespaces {
		ns = ""
	}
	switch {
	case e.Namespace == "":
		t.Namespace = ns
	case o.enforceNamespace && e.Namespace != ns:
		return live.Target{}, fmt.Errorf("metadata.namespace: the object's namespace %q does not match the namespace %q of the command line (pass --namespace=%s)", e.Namespace, ns, e.Namespace)
	default:
		t.Namespace = e.Namespace
	}
	return t, nil
}

// builderTargets resolves TYPE/NAME, TYPE NAME... and TYPE -l SELECTOR
// arguments with kubectl's resource builder. Objects that were read from
// the server are passed on to save a GET. An argument the builder cannot
// resolve is a settled target with its error.
func (o *Options) builderTargets() []target {
	r := resource.NewBuilder(o.ConfigFlags).
		Unstructured().
		ContinueOnError().
		NamespaceParam(o.namespace).DefaultNamespace().AllNamespaces(o.AllNamespaces).
		LabelSelectorParam(o.Selector).
		ResourceTypeOrNameArgs(o.All, o.args...).
		RequireObject(true).
		Flatten().
		Do()
	var targets []target
	err := r.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		t := live.Target{Mapping: info.Mapping, Namespace: info.Namespace, Name: info.Name}
		if u, ok := info.Object.(*unstructured.Unstructured); ok && u.GetResourceVersion() != "" {
			t.Object = u
		}
		targets = append(targets, target{Target: t})
		return nil
	})
	// As before any object is processed: the errors first.
	var failed []target
	for _, err := range flatten(err) {
		failed = append(failed, target{
			settled: &live.Result{Action: inject.Failed, Err: err},
			line:    "error: " + err.Error(),
		})
	}
	return append(failed, targets...)
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
