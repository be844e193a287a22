package cmd

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// markWaiting fills in, for each row whose object carries this profile's
// sidecar, the references it needs that its namespace lacks: its Pods
// wait for them in ContainerCreating. A reference that cannot be looked
// up (RBAC) is left out: status reports what it knows.
func markWaiting(ctx context.Context, client dynamic.Interface, in *inject.Injector, rows []fleet.Row, objs []*unstructured.Unstructured) {
	if len(in.Template().References()) == 0 {
		return
	}
	byKey := map[rowKey]*unstructured.Unstructured{}
	for _, o := range objs {
		byKey[rowKey{o.GetNamespace(), o.GetKind(), o.GetName()}] = o
	}
	checker := &live.ReferenceChecker{Client: client}
	for i := range rows {
		r := &rows[i]
		obj := byKey[rowKey{r.Namespace, r.Kind, r.Name}]
		if obj == nil || r.RecordedTemplate == "" {
			continue
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			continue
		}
		node, err := yaml.ConvertJSONToYamlNode(string(data))
		if err != nil {
			continue
		}
		missing, _ := checker.Missing(ctx, r.Namespace, in.InjectedReferences(node))
		for _, m := range missing {
			r.WaitingFor = append(r.WaitingFor, m.String())
		}
	}
}

// waitingLines says, on stderr, which rows' Pods wait for what.
func waitingLines(rows []fleet.Row) []string {
	var out []string
	for _, r := range rows {
		if len(r.WaitingFor) > 0 {
			out = append(out, fmt.Sprintf("%s: its sidecar needs %s, missing from namespace %s: its Pods wait for it (create it there)",
				r.Ref(), strings.Join(r.WaitingFor, ", "), r.Namespace))
		}
	}
	return out
}
