package admission_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// levelOf is the proxy's LEVEL, or "(no sidecar)".
func levelOf(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == "proxy" && len(c.Env) > 0 {
			return c.Env[0].Value
		}
	}
	return "(no sidecar)"
}

// A parameter of type string (whose values include "") computed from the
// Pod: the field takes the annotation's value, else the expression's,
// else the template's, as the core gives it.
func TestComputedStringParameter(t *testing.T) {
	t.Parallel()
	const config = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  template:
    containers:
    - name: proxy
      image: example.com/proxy:v1
      env: [{name: LEVEL, value: info}]
    parameters:
    - annotation: level
      field: containers[proxy].env[LEVEL].value
      type: string
      expression: "has(object.metadata.labels) && 'level' in object.metadata.labels ? object.metadata.labels['level'] : null"
`
	in, _, sp := compiledPolicy(t, config)
	for _, c := range []struct{ name, metadata, want string }{
		{"the template's", "namespace: ns-a", "info"},
		{"the expression's", "namespace: ns-a, labels: {level: debug}", "debug"},
		{"the annotation's", "namespace: ns-a, labels: {level: debug}, annotations: {sidecar.kinject.dev/level: trace}", "trace"},
		{"an empty annotation", "namespace: ns-a, labels: {level: debug}, annotations: {sidecar.kinject.dev/level: \"\"}", ""},
	} {
		manifest := []byte(pod(c.metadata, appContainer))
		pod, err := decodePod(manifest)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sp.admit(pod, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.mutationError != nil {
			t.Fatalf("%s: %v", c.name, got.mutationError)
		}
		out, _ := coreEntry(t, in, manifest)
		corePod, err := decodePod(out)
		if err != nil {
			t.Fatal(err)
		}
		if level, coreLevel := levelOf(got.pod), levelOf(corePod); level != c.want || coreLevel != c.want {
			t.Errorf("%s: LEVEL is %q, and %q from the core; want %q", c.name, level, coreLevel, c.want)
		}
	}
}
