package rollout

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestPlanStrategy gives each workload kind and --strategy its strategy:
// in place for Pods injected at admission and OnDelete workloads whose
// Pods differ by the image alone, recreate for a template that rolls on
// change or any other difference; --strategy in-place reports what it
// cannot upgrade in place. A Pod without a controller is upgraded in
// place when it can be, and otherwise left alone (without --recreate).
func TestPlanStrategy(t *testing.T) {
	t.Parallel()
	objs := map[string]string{
		"Deployment/web": `{kind: Deployment, metadata: {name: web, namespace: a, uid: web, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2}}`,
		// one replica: in place would leave its Services no Pod while drained
		"Deployment/solo": `{kind: Deployment, metadata: {name: solo, namespace: a, uid: solo, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}`,
		"StatefulSet/db":  `{kind: StatefulSet, metadata: {name: db, namespace: a, uid: db}, spec: {updateStrategy: {type: OnDelete}}}`,
	}
	lookup := func(_, kind, name string) *unstructured.Unstructured {
		if kind == "Pod" {
			return injectedPod(t, injector(t, "envoy:a", true), func(obj map[string]any) {
				obj["metadata"].(map[string]any)["name"] = name
			})
		}
		if m, ok := objs[kind+"/"+name]; ok {
			return object(t, m)
		}
		return nil
	}
	rows := []fleet.Row{
		{Namespace: "a", Kind: "Pod", Name: "bare", State: fleet.Outdated, Bare: true},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "web", State: fleet.NotInjected, Pods: 1, PodsBehind: 1},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "solo", State: fleet.NotInjected, Pods: 1, PodsBehind: 1},
		{Namespace: "a", Kind: "StatefulSet", Group: "apps", Name: "db", State: fleet.Outdated, Pods: 1, PodsBehind: 0},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "templated", State: fleet.Outdated, Pods: 1},
	}
	podsOn := func(in *inject.Injector) Pods {
		return func(w *unstructured.Unstructured) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{injectedPod(t, in, func(obj map[string]any) {
				obj["metadata"].(map[string]any)["name"] = w.GetName() + "-0"
			})}
		}
	}
	describe := func(steps []Step) string {
		var b strings.Builder
		for _, s := range steps {
			fmt.Fprintf(&b, "%s %s %s %d %s\n", s.Ref(), s.Action, s.Strategy, s.PodsInPlace, s.Reason)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, strategy string
		native         bool // the current template's form; the Pods run a native sidecar
		want           string
	}{
		{"auto, image only", StrategyAuto, true, `pod/bare in-place in-place 1 
deployment.apps/web in-place in-place 1 
deployment.apps/solo restart recreate 0 
statefulset.apps/db in-place in-place 1 
deployment.apps/templated reinject recreate 0 
`},
		{"auto, more than the image", StrategyAuto, false, `pod/bare report  0 bare_pod
deployment.apps/web restart recreate 0 
deployment.apps/solo restart recreate 0 
statefulset.apps/db delete-pods recreate 0 
deployment.apps/templated reinject recreate 0 
`},
		{"in-place, more than the image", StrategyInPlace, false, `pod/bare report  0 bare_pod
deployment.apps/web report recreate 0 in_place_not_possible
deployment.apps/solo report recreate 0 in_place_not_possible
statefulset.apps/db report recreate 0 in_place_not_possible
deployment.apps/templated report recreate 0 in_place_not_possible
`},
		{"recreate, image only", StrategyRecreate, true, `pod/bare report  0 bare_pod
deployment.apps/web restart recreate 0 
deployment.apps/solo restart recreate 0 
statefulset.apps/db delete-pods recreate 0 
deployment.apps/templated reinject recreate 0 
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := PlanOptions{Strategy: tc.strategy, Injector: injector(t, "envoy:b", tc.native), Pods: podsOn(injector(t, "envoy:a", true))}
			if got := describe(Plan(rows, lookup, opts)); got != tc.want {
				t.Errorf("plan:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
