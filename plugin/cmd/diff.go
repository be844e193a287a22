package cmd

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// printDiffs writes, for every object that would change, the unified diff
// of its YAML as read and as the server computed it (a server-side dry
// run), without the fields every write changes (managedFields,
// resourceVersion), as kubectl diff shows objects. It returns how many
// objects differ.
func (o *Options) printDiffs(results []live.Result) (int, error) {
	differ := 0
	for _, r := range results {
		if !r.Changed() || r.Before == nil || r.Object == nil {
			continue
		}
		before, err := diffYAML(r.Before)
		if err != nil {
			return differ, err
		}
		after, err := diffYAML(r.Object)
		if err != nil {
			return differ, err
		}
		name := r.Ref
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Ref
		}
		changed, err := textdiff.Write(o.Out, "live/"+name, "injected/"+name, before, after, textdiff.Options{Color: o.Flags.ColorFor(o.Out)})
		if err != nil {
			return differ, fmt.Errorf("write the diff: %w", err)
		}
		if changed {
			differ++
		}
	}
	return differ, nil
}

// diffYAML renders an object for a diff.
func diffYAML(obj *unstructured.Unstructured) (string, error) {
	c := obj.DeepCopy()
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	data, err := yaml.Marshal(c.Object)
	if err != nil {
		return "", fmt.Errorf("render %s for the diff: %w", obj.GetName(), err)
	}
	return string(data), nil
}
