package admission_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// benchPod is a Pod as a Deployment's ReplicaSet creates it: one app
// container with a port, labels and the pod-template-hash.
const benchPod = `apiVersion: v1
kind: Pod
metadata:
  name: web-5d8f7c9b4-x2x7q
  namespace: default
  labels: {app: web, pod-template-hash: 5d8f7c9b4}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8f7c9b4, uid: 0d7c3a8e-5f1b-4e0a-9b1e-3f2b8c6d9a10, controller: true, blockOwnerDeletion: true}
spec:
  containers:
  - name: web
    image: nginx:1.27
    ports:
    - {containerPort: 8080, protocol: TCP}
    resources:
      requests: {cpu: 100m, memory: 64Mi}
`

// annotatedPod is benchPod with annotations as Pods often carry them
// (a restart, scraping) and one override.
var annotatedPod = strings.Replace(benchPod, "  labels:", `  annotations:
    kubectl.kubernetes.io/restartedAt: "2026-11-30T10:00:00Z"
    prometheus.io/scrape: "true"
    prometheus.io/port: "8080"
    sidecar.kinject.dev/cpu-request: 200m
  labels:`, 1)

// BenchmarkAdmit creates the bench Pod under the API server's own
// admission machinery (mutating then validating policy), for the
// compiled default policy and for the constant one: a mutating policy
// with no match conditions, no variables and no validating half, whose
// one JSON patch adds what the compiled policy adds to this Pod. The
// difference between the two is what the compiled policy's CEL costs;
// the constant one is what any policy that injects this sidecar pays.
func BenchmarkAdmit(b *testing.B) {
	in, _, compiled := compiledPolicy(b, inject.DefaultTemplateYAML())
	for _, manifest := range []struct{ name, text string }{{"plain", benchPod}, {"annotated", annotatedPod}} {
		b.Run(manifest.name, func(b *testing.B) { benchmarkAdmit(b, in, compiled, manifest.text) })
	}
}

func benchmarkAdmit(b *testing.B, in *inject.Injector, compiled *serverPolicy, manifest string) {
	pod, err := decodePod([]byte(manifest))
	if err != nil {
		b.Fatal(err)
	}
	injected, entries := in.ProcessText(inject.OpInject, []byte(manifest), 0)
	if len(entries) != 1 || entries[0].Action != inject.Injected {
		b.Fatalf("the core does not inject the bench Pod: %+v", entries)
	}
	want, err := decodePod(injected)
	if err != nil {
		b.Fatal(err)
	}
	constant, err := constantPolicy(pod, want)
	if err != nil {
		b.Fatal(err)
	}
	for _, side := range []struct {
		name   string
		policy *serverPolicy
	}{{"constant", constant}, {"compiled", compiled}} {
		b.Run(side.name, func(b *testing.B) {
			got, err := side.policy.admit(pod.DeepCopy(), nil)
			if err != nil {
				b.Fatal(err)
			}
			if !equalPods(got.pod, want) {
				b.Fatalf("%s: the admitted Pod is not the core's\n%s", side.name, asJSON(got.pod))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := side.policy.admit(pod.DeepCopy(), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMachinery measures what the API server's policy machinery
// charges for variables, on the constant policy of the bench Pod: with
// 50 variables declared and none used (each expression's activation
// makes an accessor for every declared variable), and with one variable
// read 50 times (each read unescapes the name with a regular expression
// and looks it up in a lazy map).
func BenchmarkMachinery(b *testing.B) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	pod, err := decodePod([]byte(benchPod))
	if err != nil {
		b.Fatal(err)
	}
	injected, _ := in.ProcessText(inject.OpInject, []byte(benchPod), 0)
	want, err := decodePod(injected)
	if err != nil {
		b.Fatal(err)
	}
	constant, err := constantPolicyObjects(pod, want)
	if err != nil {
		b.Fatal(err)
	}
	var unused, reads []any
	refs := []string{}
	for i := range 50 {
		unused = append(unused, map[string]any{"name": fmt.Sprintf("v%d", i), "expression": fmt.Sprintf("%d", i)})
		refs = append(refs, "variables.v")
	}
	reads = []any{map[string]any{"name": "v", "expression": "1"}}
	for _, side := range []struct {
		name string
		edit func(spec map[string]any)
	}{
		{"constant", func(map[string]any) {}},
		{"50-unused-variables", func(spec map[string]any) { spec["variables"] = unused }},
		{"1-variable-read-50-times", func(spec map[string]any) {
			spec["variables"] = reads
			m := spec["mutations"].([]any)[0].(map[string]any)["jsonPatch"].(map[string]any)
			m["expression"] = "[" + strings.Join(refs, ", ") + "].exists(x, x == 0) ? [] : " + m["expression"].(string)
		}},
	} {
		b.Run(side.name, func(b *testing.B) {
			objs := append([][]byte{}, constant...)
			var mp map[string]any
			if err := json.Unmarshal(objs[0], &mp); err != nil {
				b.Fatal(err)
			}
			side.edit(mp["spec"].(map[string]any))
			if objs[0], err = json.Marshal(mp); err != nil {
				b.Fatal(err)
			}
			sp, err := loadServerObjects(objs)
			if err != nil {
				b.Fatal(err)
			}
			got, err := sp.admit(pod.DeepCopy(), nil)
			if err != nil {
				b.Fatal(err)
			}
			if !equalPods(got.pod, want) {
				b.Fatalf("%s: the admitted Pod is not the core's", side.name)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sp.admit(pod.DeepCopy(), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// constantPolicy is p with its mutating half replaced by one constant
// JSON patch from pod to want, and its validating half by nothing.
func constantPolicy(pod, want *corev1.Pod) (*serverPolicy, error) {
	objs, err := constantPolicyObjects(pod, want)
	if err != nil {
		return nil, err
	}
	return loadServerObjects(objs)
}

// constantPolicyObjects are constantPolicy's objects.
func constantPolicyObjects(pod, want *corev1.Pod) ([][]byte, error) {
	var ops []string
	lit := func(v any) string {
		data, _ := json.Marshal(v)
		var generic any
		_ = json.Unmarshal(data, &generic)
		return celLiteral(generic)
	}
	ops = append(ops, fmt.Sprintf(`JSONPatch{op: "add", path: "/spec/containers/-", value: %s}`, lit(want.Spec.Containers[len(pod.Spec.Containers)])))
	if pod.Annotations == nil {
		ops = append(ops, fmt.Sprintf(`JSONPatch{op: "add", path: "/metadata/annotations", value: %s}`, lit(want.Annotations)))
	}
	for _, k := range slices.Sorted(maps.Keys(want.Annotations)) {
		if _, ok := pod.Annotations[k]; pod.Annotations != nil && (!ok || pod.Annotations[k] != want.Annotations[k]) {
			path := "/metadata/annotations/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			ops = append(ops, fmt.Sprintf(`JSONPatch{op: "add", path: %q, value: %s}`, path, lit(want.Annotations[k])))
		}
	}
	mp := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "MutatingAdmissionPolicy",
		"metadata":   map[string]any{"name": "constant"},
		"spec": map[string]any{
			"failurePolicy":      "Fail",
			"reinvocationPolicy": "Never",
			"mutations":          []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{"expression": "[" + strings.Join(ops, ", ") + "]"}}},
		},
	}
	vp := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "ValidatingAdmissionPolicy",
		"metadata":   map[string]any{"name": "constant"},
		"spec":       map[string]any{"failurePolicy": "Fail"},
	}
	var objs [][]byte
	for _, o := range []any{mp, nil, vp} {
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		objs = append(objs, data)
	}
	return objs, nil
}

// celLiteral writes a JSON value as a CEL literal, each value in dyn()
// (CEL's lists and maps otherwise hold values of one type).
func celLiteral(v any) string {
	switch v := v.(type) {
	case map[string]any:
		parts := []string{}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, fmt.Sprintf("%q: dyn(%s)", k, celLiteral(v[k])))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := []string{}
		for _, x := range v {
			parts = append(parts, "dyn("+celLiteral(x)+")")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case float64:
		if v == float64(int64(v)) {
			return fmt.Sprintf("%d", int64(v))
		}
		return fmt.Sprintf("%g", v)
	case nil:
		return "null"
	default:
		data, _ := json.Marshal(v)
		return string(data)
	}
}

func equalPods(a, b *corev1.Pod) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return string(x) == string(y)
}
