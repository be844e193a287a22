package rollout

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// named is a Pod injected by in, named name.
func named(t *testing.T, in *inject.Injector, name string) *unstructured.Unstructured {
	return injectedPod(t, in, func(obj map[string]any) {
		obj["metadata"].(map[string]any)["name"] = name
	})
}

// TestStrategyReason: --strategy auto upgrades a workload in place when
// every Pod behind can be, counting them and saying what changes (the
// image, or the image and resources); a workload none of whose Pods is
// behind is recreated, and says so.
func TestStrategyReason(t *testing.T) {
	t.Parallel()
	deploy := `{kind: Deployment, metadata: {name: web, namespace: a}, spec: {replicas: 2}}`
	for _, tc := range []struct {
		name     string
		obj      string
		was, now *inject.Injector
		inPlace  bool
		pods     int
		want     string
	}{
		{"image alone", deploy, injector(t, "envoy:a", true), injector(t, "envoy:b", true), true, 2,
			"injected at admission; the 2 Pods behind differ from the current template only in the sidecar's image"},
		{"image and resources", deploy, injector(t, "envoy:a", true), resized(t, "envoy:b", "200m", "128Mi", "2", "1Gi", ""), true, 2,
			"injected at admission; the 2 Pods behind differ from the current template only in the sidecar's image and resources (resized within their QoS class)"},
		{"OnDelete", `{kind: StatefulSet, metadata: {name: web, namespace: a}, spec: {replicas: 2, updateStrategy: {type: OnDelete}}}`,
			injector(t, "envoy:a", true), injector(t, "envoy:b", true), true, 2,
			"updateStrategy OnDelete; the 2 Pods behind differ from the current template only in the sidecar's image"},
		{"every Pod current", deploy, injector(t, "envoy:b", true), injector(t, "envoy:b", true), false, 0,
			"no Pod of it can be upgraded in place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pods := []*unstructured.Unstructured{named(t, tc.was, "web-a"), named(t, tc.was, "web-b")}
			opts := PlanOptions{Strategy: StrategyAuto, Injector: tc.now, Pods: func(*unstructured.Unstructured) []*unstructured.Unstructured { return pods }}
			var s Step
			if got := strategyFor(&s, object(t, tc.obj), opts); got != tc.inPlace {
				t.Errorf("in place %v, want %v (%s)", got, tc.inPlace, s.StrategyReason)
			}
			if s.StrategyReason != tc.want || s.PodsInPlace != tc.pods {
				t.Errorf("%d Pods in place: %q\nwant %d: %q", s.PodsInPlace, s.StrategyReason, tc.pods, tc.want)
			}
		})
	}
}

// TestPodUpgradesOrder: a workload's Pods are upgraded highest name
// first, as a StatefulSet rolls, whatever order they are listed in.
func TestPodUpgradesOrder(t *testing.T) {
	t.Parallel()
	was := injector(t, "envoy:a", true)
	pods := []*unstructured.Unstructured{named(t, was, "db-1"), named(t, was, "db-0"), named(t, was, "db-2")}
	upgrades, why := PodUpgrades(injector(t, "envoy:b", true), object(t, `{kind: StatefulSet, metadata: {name: db, namespace: a}}`), pods)
	if why != "" {
		t.Fatal(why)
	}
	var got []string
	for _, u := range upgrades {
		got = append(got, u.Pod)
	}
	if len(got) != 3 || got[0] != "db-2" || got[1] != "db-1" || got[2] != "db-0" {
		t.Errorf("order %v, want [db-2 db-1 db-0]", got)
	}
}
