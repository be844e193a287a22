package cmd

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// printObjects writes the resulting objects for --output: YAML documents,
// one JSON object (a List for several), or kubectl-style names.
func (o *Options) printObjects(results []live.Result) error {
	if o.Output == "" {
		return nil
	}
	var objs []*unstructured.Unstructured
	for _, r := range results {
		// Objects without a pod template (Secrets among them) are never printed.
		if r.Object != nil && r.Reason != inject.ReasonNotAWorkload {
			obj := r.Object.DeepCopy()
			obj.SetManagedFields(nil)
			objs = append(objs, obj)
		}
	}
	return printUnstructured(o.Out, o.Output, objs)
}

// printUnstructured writes objs as -o FORMAT does: YAML documents, one
// JSON object (a List for several), or kubectl-style names.
func printUnstructured(w io.Writer, format string, objs []*unstructured.Unstructured) error {
	switch format {
	case "name":
		for _, obj := range objs {
			fmt.Fprintln(w, live.Ref(obj.GroupVersionKind(), obj.GetName()))
		}
		return nil
	case "yaml":
		p := &printers.YAMLPrinter{}
		for _, obj := range objs {
			if err := p.PrintObj(obj, w); err != nil {
				return fmt.Errorf("print: %w", err)
			}
		}
		return nil
	}
	var out runtime.Object
	if len(objs) == 1 {
		out = objs[0]
	} else {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
		list.SetResourceVersion("")
		for _, obj := range objs {
			list.Items = append(list.Items, *obj)
		}
		out = list
	}
	if err := (&printers.JSONPrinter{}).PrintObj(out, w); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}
