package admission

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	mutatingPolicies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}
	mutatingBindings = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"}
)

// tracePolicy is a MutatingAdmissionPolicy that appends its name to the
// annotation "trace" of Pods annotated "trace", at every invocation.
func tracePolicy(name, reinvocation string) *unstructured.Unstructured {
	expr := fmt.Sprintf(`[JSONPatch{op: "add", path: "/metadata/annotations/trace", value: object.metadata.annotations["trace"] + %q}]`, ","+name)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"},
			}}},
			"matchConditions":    []any{map[string]any{"name": "traced", "expression": `has(object.metadata.annotations) && "trace" in object.metadata.annotations`}},
			"mutations":          []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{"expression": expr}}},
			"failurePolicy":      "Fail",
			"reinvocationPolicy": reinvocation,
		},
	}}
}

func traceBinding(name string, generation int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"generation": fmt.Sprint(generation)}},
		"spec":     map[string]any{"policyName": name},
	}}
}

// TestPolicyOrder finds out how the API server orders two
// MutatingAdmissionPolicies and re-invokes them, with two policies that
// append their names to an annotation: each runs once with
// reinvocationPolicy Never; with IfNeeded, both run again, in the same
// order, because the Pod changed. The order between the two is not by name or
// creation: the server lists the policies from a Go map each time any
// policy or binding changes, so it is fixed between changes and may differ
// after one. The test requires each order to be fixed while nothing
// changes and logs the orders seen across changes.
func TestPolicyOrder(t *testing.T) {
	c.Require(t)
	ctx := context.Background()
	dc := client(t)
	names := []string{"kinject-order-b", "kinject-order-a"}
	cleanup := func() {
		for _, n := range names {
			_ = dc.Resource(mutatingBindings).Delete(ctx, n, metav1.DeleteOptions{})
			_ = dc.Resource(mutatingPolicies).Delete(ctx, n, metav1.DeleteOptions{})
		}
	}
	t.Cleanup(cleanup)
	probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: trace, annotations: {trace: start}}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	trace := func() string {
		got, err := createPod(t, probe, true)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := annotation(got, "trace")
		return v
	}
	for _, reinvocation := range []string{"Never", "IfNeeded"} {
		cleanup()
		waitTrace(t, trace, func(s string) bool { return s == "start" })
		for _, n := range names {
			if _, err := dc.Resource(mutatingPolicies).Create(ctx, tracePolicy(n, reinvocation), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := dc.Resource(mutatingBindings).Create(ctx, traceBinding(n, 0), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]int{}
		for gen := 1; gen <= 8; gen++ {
			// A change to a binding makes the server list the policies again.
			b, err := dc.Resource(mutatingBindings).Get(ctx, names[gen%2], metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b.SetLabels(map[string]string{"generation": fmt.Sprint(gen)})
			if _, err := dc.Resource(mutatingBindings).Update(ctx, b, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			first := waitTrace(t, trace, func(s string) bool { return strings.Count(s, ",") >= 2 })
			for i := 0; i < 5; i++ {
				if again := trace(); again != first {
					t.Fatalf("reinvocation %s: the order changed with no change to the policies: %q then %q", reinvocation, first, again)
				}
			}
			seen[first]++
			runs := strings.Split(strings.TrimPrefix(first, "start,"), ",")
			// With IfNeeded, the policy plugin is invoked again because the
			// Pod changed, and both policies run again in the same order.
			want := 2
			if reinvocation == "IfNeeded" {
				want = 4
			}
			if len(runs) != want || runs[0] == runs[1] || (want == 4 && (runs[0] != runs[2] || runs[1] != runs[3])) {
				t.Errorf("reinvocation %s: runs %v", reinvocation, runs)
			}
		}
		var orders []string
		for o, n := range seen {
			orders = append(orders, fmt.Sprintf("%s (%d)", o, n))
		}
		sort.Strings(orders)
		t.Logf("reinvocation %s: orders seen over 8 policy list refreshes: %s", reinvocation, strings.Join(orders, ", "))
	}
}

// waitTrace returns the probe's trace once ok accepts it.
func waitTrace(t *testing.T, trace func() string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := trace()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %q not as expected within 60s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
