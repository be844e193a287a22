package cmd

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/sizing"
)

func sizePod(name, owner string, injected bool) *unstructured.Unstructured {
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "shop", "uid": name},
		"spec": map[string]any{"initContainers": []any{map[string]any{"name": "envoy", "resources": map[string]any{
			"requests": map[string]any{"cpu": "100m", "memory": "64Mi"}, "limits": map[string]any{"memory": "512Mi"}}}}},
	}}
	if injected {
		p.SetAnnotations(map[string]string{"sidecar.kinject.dev/status": `{"template":"x"}`})
	}
	yes := true
	p.SetOwnerReferences([]metav1.OwnerReference{{Kind: "Deployment", Name: owner, UID: types.UID(owner), Controller: &yes}})
	return p
}

// size's rows: one per sidecar container of each injected workload, with
// what its Pods request now and the template's override annotations; a
// named workload without the sidecar has its reason; samples are counted
// only from the workload's own Pods.
func TestSizeRows(t *testing.T) {
	in, err := inject.NewDefault(inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "web"}}}
	plain := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "plain", "namespace": "shop", "uid": "plain"}}}
	objs := []*unstructured.Unstructured{web, plain, sizePod("web-a", "web", true), sizePod("web-b", "web", true), sizePod("plain-a", "plain", false)}
	o := &SizeOptions{Options: sizing.DefaultOptions}
	rows, pods, containers := o.rows(in, fleet.Workloads(objs), statusFilter{"deployments": {"web": true, "plain": true}})
	if len(rows) != 2 || rows[0].Workload != "deployment/web" || rows[0].Container != "envoy" || rows[1].Reason != reasonNoSidecar {
		t.Fatalf("rows %+v", rows)
	}
	if want := (sizing.Resources{CPURequest: 0.1, MemoryRequest: 64 << 20, MemoryLimit: 512 << 20}); math.Abs(rows[0].Now.CPURequest-want.CPURequest) > 1e-9 || rows[0].Now.MemoryRequest != want.MemoryRequest || rows[0].Now.MemoryLimit != want.MemoryLimit {
		t.Errorf("now %+v, want %+v", rows[0].Now, want)
	}
	if p := rows[0].parameters; p.cpuRequest != "sidecar.kinject.dev/cpu-request" || p.memoryRequest != "sidecar.kinject.dev/memory-request" || p.memoryLimit != "sidecar.kinject.dev/memory-limit" {
		t.Errorf("parameters %+v", p)
	}
	if len(pods["shop"]) != 2 || len(containers) != 1 || containers[0] != "envoy" {
		t.Errorf("to sample: %v, %v", pods, containers)
	}
	got := samples{}
	for i := 0; i < 10; i++ {
		got.add(usageKey{"shop", "web-a", "envoy"}, 0.01, 10<<20, true, true)
		got.add(usageKey{"shop", "web-b", "envoy"}, 0.02, 12<<20, true, true)
		got.add(usageKey{"shop", "other", "envoy"}, 5, 900<<20, true, true) // not web's
	}
	o.recommend(&rows[0], got, time.Minute)
	if rows[0].Reason != "" || rows[0].Samples != 20 || rows[0].Recommended.CPURequest != 0.02 || rows[0].Recommended.MemoryRequest != 14<<20 {
		t.Errorf("recommended %+v (samples %d, reason %q): want 20m and 14Mi (12Mi + 15%%, rounded up) from web's 20 samples", rows[0].Recommended, rows[0].Samples, rows[0].Reason)
	}
	if rows[0].FreedMemory != 2*(64-14)<<20 {
		t.Errorf("frees %v bytes", rows[0].FreedMemory)
	}
	wantAnn := map[string]string{"sidecar.kinject.dev/cpu-request": "20m", "sidecar.kinject.dev/memory-request": "14Mi", "sidecar.kinject.dev/memory-limit": "112Mi"}
	if !reflect.DeepEqual(rows[0].Annotations, wantAnn) {
		t.Errorf("annotations %v, want %v", rows[0].Annotations, wantAnn)
	}
	// Too few samples: the row says how many, from how many Pods.
	short := rows[0]
	few := samples{}
	few.add(usageKey{"shop", "web-a", "envoy"}, 0.01, 10<<20, true, true)
	few.add(usageKey{"shop", "web-b", "envoy"}, 0.02, 12<<20, true, true)
	o.recommend(&short, few, time.Minute)
	if !strings.HasPrefix(short.Message, "2 samples of 2 Pods; at least ") {
		t.Errorf("with 2 samples: %s %q", short.Reason, short.Message)
	}
	// The workloads a filter names: a kind alone takes its injected
	// workloads (the others are not reported), names take those only.
	for _, tc := range []struct {
		filter statusFilter
		want   []string
	}{
		{nil, []string{"deployment/web"}},
		{statusFilter{"deployments": {}}, []string{"deployment/web"}},
		{statusFilter{"deployments": {"plain": true}}, []string{"deployment/plain"}},
		{statusFilter{"statefulsets": {}}, nil},
	} {
		rows, _, _ := o.rows(in, fleet.Workloads(objs), tc.filter)
		var got []string
		for _, r := range rows {
			got = append(got, r.Workload)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("filter %v: rows of %v, want %v", tc.filter, got, tc.want)
		}
	}
	var out strings.Builder
	o.Out, o.ErrOut = &out, &out
	if err := o.print(rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"deployment/web", "100m", "20m", "64Mi", "14Mi", "112Mi", "-80%, -78%", "no_sidecar",
		"Recommended over 1m0s (p95 CPU, memory peak +15%); across these Pods the recommendation frees 160m CPU and 100Mi of memory requested\n",
		"\nshop/deployment/plain (): no_sidecar: none of its 1 Pods runs the sidecar of the default profile\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), ": no_sidecar: "); n != 1 || strings.Contains(out.String(), "(envoy): ") {
		t.Errorf("%d reasons told, or a row without one told:\n%s", n, out.String())
	}
}

// A template with no resource parameters is reported, never sized.
func TestSizeNoParameters(t *testing.T) {
	tmpl, err := inject.ParseTemplate([]byte("containers:\n- name: agent\n  image: agent:1\n"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tmpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "web"}}}
	o := &SizeOptions{Options: sizing.DefaultOptions}
	rows, _, _ := o.rows(in, fleet.Workloads([]*unstructured.Unstructured{web, sizePod("web-a", "web", true)}), nil)
	if len(rows) != 1 || rows[0].Reason != reasonNoParameters || !strings.Contains(rows[0].Message, "containers[agent].resources.requests") {
		t.Fatalf("rows %+v", rows)
	}
	o.recommend(&rows[0], samples{}, time.Minute)
	if rows[0].Reason != reasonNoParameters {
		t.Errorf("recommend replaced the reason: %+v", rows[0])
	}
}

// --apply patches each injected Pod of a workload injected at admission
// with the template's override annotations; nothing for a row not sized,
// nor for a workload whose pod template carries the sidecar.
func TestSizeApply(t *testing.T) {
	in, err := inject.NewDefault(inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "web"}}}
	o := &SizeOptions{Options: sizing.DefaultOptions, FieldManager: "kubectl-inject"}
	rows, _, _ := o.rows(in, fleet.Workloads([]*unstructured.Unstructured{web, sizePod("web-a", "web", true), sizePod("web-b", "web", true)}), nil)
	got := samples{}
	for i := 0; i < 10; i++ {
		got.add(usageKey{"shop", "web-a", "envoy"}, 0.25, 100<<20, true, true)
	}
	o.recommend(&rows[0], got, time.Minute)
	skipped := rows[0]
	skipped.Reason = sizing.ReasonTooFewSamples
	inTemplate := rows[0]
	inTemplate.inTemplate = true
	rows = append(rows, skipped, inTemplate)
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	type call struct{ resource, name, body string }
	var calls []call
	client.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		calls = append(calls, call{p.GetResource().Resource, p.GetName(), string(p.GetPatch())})
		return true, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}, nil
	})
	var out strings.Builder
	o.ErrOut = &out
	if err := o.apply(context.Background(), client, rows); err != nil {
		t.Fatal(err)
	}
	// 250m, memory 100Mi + 15% = 115Mi, limit 8x = 920Mi.
	body := `{"metadata":{"annotations":{"sidecar.kinject.dev/cpu-request":"250m","sidecar.kinject.dev/memory-limit":"920Mi","sidecar.kinject.dev/memory-request":"115Mi"}}}`
	want := []call{{"pods", "web-a", body}, {"pods", "web-b", body}}
	if len(calls) != len(want) {
		t.Fatalf("%d patches: %v", len(calls), calls)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("patch %d: %+v, want %+v", i, calls[i], want[i])
		}
	}
	if want := "shop/deployment/web: its 2 Pods annotated (envoy); kubectl inject restart -n shop deployment/web resizes them in place\n"; out.String() != want {
		t.Errorf("stderr %q, want %q", out.String(), want)
	}
	if !rows[0].Applied || rows[1].Applied || rows[2].Applied || rows[2].Reason != reasonInPodTemplate {
		t.Errorf("applied: %v, %v, %v (%s)", rows[0].Applied, rows[1].Applied, rows[2].Applied, rows[2].Reason)
	}
	// One Pod: "its Pod", "it".
	one := rows[0]
	one.pods = map[string]bool{"web-a": true}
	out.Reset()
	if err := o.apply(context.Background(), client, []sized{one}); err != nil {
		t.Fatal(err)
	}
	if want := "shop/deployment/web: its Pod annotated (envoy); kubectl inject restart -n shop deployment/web resizes it in place\n"; out.String() != want {
		t.Errorf("stderr %q, want %q", out.String(), want)
	}
	web.Object["spec"] = map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{in.StatusAnnotation(): "{}"}}}}
	if !templateInjected(web, in.StatusAnnotation()) {
		t.Error("a pod template with the record: not seen")
	}
}

// TestSizeDefaults: the defaults docs/sizing.md states.
func TestSizeDefaults(t *testing.T) {
	t.Parallel()
	c := NewCmdSize(genericclioptions.NewConfigFlags(true), genericiooptions.NewTestIOStreamsDiscard())
	for flag, want := range map[string]string{"window": "168h0m0s", "watch": "5m0s", "interval": "15s"} {
		if got := c.Flags().Lookup(flag).DefValue; got != want {
			t.Errorf("--%s defaults to %s, want %s", flag, got, want)
		}
	}
}
