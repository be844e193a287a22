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
// (injectionPatch: the sidecar, its volumes, the annotations), written as CEL
// literals: no match conditions, no variables, no decision, no validating
// policy. What the API server spends on it (the policy plugin, the JSON
// patch applied to the object, the mutating plugins run again on the
// changed Pod, the larger Pod stored) every policy that injects this
// sidecar pays; the rest is the compiled policy's own.
const floorPolicyName = "kinject-bench-constant"

// floorPolicy returns the constant policy and its binding (no match
// resources: every namespace) for the bench Pod injected as preInjected.
func floorPolicy(preInjected *corev1.Pod) ([][]byte, error) {
	adds, err := injectionPatch(preInjected)
	if err != nil {
		return nil, err
	}
	patches := []string{}
	for _, p := range adds {
		lit, err := celLiteral(p.Value)
		if err != nil {
			return nil, err
		}
		patches = append(patches, fmt.Sprintf(`JSONPatch{op: "add", path: %q, value: %s}`, p.Path, lit))
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

// jsonPatchAdd is one "add" operation of a JSON patch.
type jsonPatchAdd struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// injectionPatch returns the operations that turn the bench Pod (one app
// container, no init containers, volumes or annotations) into
// preInjected, the same Pod as the compiled policy injects it: the
// sidecar (an init container when native, as the default is; a second
// container when classic), the volumes if any and the annotations. Both
// references of the admission part, the constant policy and the
// zero-work webhook, add exactly these.
func injectionPatch(preInjected *corev1.Pod) ([]jsonPatchAdd, error) {
	spec := preInjected.Spec
	var sidecar jsonPatchAdd
	switch {
	case len(spec.Containers) == 1 && len(spec.InitContainers) == 1:
		sidecar = jsonPatchAdd{"add", "/spec/initContainers", spec.InitContainers}
	case len(spec.Containers) == 2 && len(spec.InitContainers) == 0:
		sidecar = jsonPatchAdd{"add", "/spec/containers/-", spec.Containers[1]}
	default:
		return nil, fmt.Errorf("the injected bench Pod has %d containers and %d init containers, want the app's and the sidecar, native or classic", len(spec.Containers), len(spec.InitContainers))
	}
	adds := []jsonPatchAdd{sidecar}
	if len(spec.Volumes) > 0 { // the default adds none
		adds = append(adds, jsonPatchAdd{"add", "/spec/volumes", spec.Volumes})
	}
	return append(adds, jsonPatchAdd{"add", "/metadata/annotations", preInjected.Annotations}), nil
}

// injectionPatchJSON is injectionPatch as a JSON patch document, as the
// zero-work webhook answers it.
func injectionPatchJSON(preInjected *corev1.Pod) ([]byte, error) {
	adds, err := injectionPatch(preInjected)
	if err != nil {
		return nil, err
	}
	return json.Marshal(adds)
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
