package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The constant policy is the control that bounds what any mutating
// admission policy costs here: one MutatingAdmissionPolicy whose single
// JSON patch adds exactly what the compiled policy adds to the bench Pod
// (the sidecar container, the volume, the annotations), written as CEL
// literals: no match conditions, no variables, no decision, no validating
// policy. What the API server spends on it (the policy plugin, the JSON
// patch applied to the object, the mutating plugins run again on the
// changed Pod, the larger Pod stored) every policy that injects this
// sidecar pays; the rest is the compiled policy's own.
const floorPolicyName = "kinject-bench-constant"

// floorPolicy returns the constant policy and its binding (no match
// resources: every namespace) for the bench Pod injected as preInjected.
func floorPolicy(preInjected *corev1.Pod) ([][]byte, error) {
	if len(preInjected.Spec.Containers) != 2 {
		return nil, fmt.Errorf("the injected bench Pod has %d containers, want the app's and the sidecar", len(preInjected.Spec.Containers))
	}
	patches := []string{}
	for _, p := range []struct {
		path  string
		value any
	}{
		{"/spec/containers/-", preInjected.Spec.Containers[1]},
		{"/spec/volumes", preInjected.Spec.Volumes},
		{"/metadata/annotations", preInjected.Annotations},
	} {
		lit, err := celLiteral(p.value)
		if err != nil {
			return nil, err
		}
		patches = append(patches, fmt.Sprintf(`JSONPatch{op: "add", path: %q, value: %s}`, p.path, lit))
	}
	policy := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "MutatingAdmissionPolicy",
		"metadata":   map[string]any{"name": floorPolicyName},
		"spec": map[string]any{
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []string{""}, "apiVersions": []string{"v1"}, "operations": []string{"CREATE"}, "resources": []string{"pods"},
			}}},
			"mutations":          []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{"expression": "[" + strings.Join(patches, ", ") + "]"}}},
			"failurePolicy":      "Fail",
			"reinvocationPolicy": "Never",
		},
	}
	binding := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "MutatingAdmissionPolicyBinding",
		"metadata":   map[string]any{"name": floorPolicyName},
		"spec":       map[string]any{"policyName": floorPolicyName},
	}
	var out [][]byte
	for _, o := range []any{policy, binding} {
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// celLiteral writes v (as JSON would encode it) as a CEL literal. Values
// are wrapped in dyn(), because CEL's maps and lists must otherwise hold
// values of one type.
func celLiteral(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return "", err
	}
	var b strings.Builder
	writeCEL(&b, generic)
	return b.String(), nil
}

func writeCEL(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%q: dyn(", k)
			writeCEL(b, v[k])
			b.WriteString(")")
		}
		b.WriteString("}")
	case []any:
		b.WriteString("[")
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("dyn(")
			writeCEL(b, x)
			b.WriteString(")")
		}
		b.WriteString("]")
	case string:
		fmt.Fprintf(b, "%q", v)
	case float64:
		if v == float64(int64(v)) {
			fmt.Fprintf(b, "%d", int64(v))
		} else {
			fmt.Fprintf(b, "%g", v)
		}
	case bool:
		fmt.Fprintf(b, "%t", v)
	case nil:
		b.WriteString("null")
	}
}
