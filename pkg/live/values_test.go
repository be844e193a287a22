package live

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// stored returns deploymentYAML injected with cpu-request 250m, as the API
// server stores it: with the defaults it adds to the sidecar and its cpu
// limit normalized (1000m -> 1); then edit changes it.
func stored(t *testing.T, edit func(obj *unstructured.Unstructured)) *unstructured.Unstructured {
	t.Helper()
	manifest := strings.Replace(deploymentYAML, `resourceVersion: "42"}`, `resourceVersion: "42", annotations: {sidecar.kinject.dev/cpu-request: 250m}}`, 1)
	_, obj := step(t, patcher(t, inject.OpInject), object(t, manifest), inject.Injected)
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		c := c.(map[string]any)
		c["imagePullPolicy"], c["terminationMessagePath"] = "IfNotPresent", "/dev/termination-log"
		if c["name"] == "envoy" {
			_ = unstructured.SetNestedField(c, "1", "resources", "limits", "cpu")
		}
	}
	_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
	// The readiness probe gets the server's defaults too.
	for _, c := range containers {
		if c := c.(map[string]any); c["name"] == "envoy" {
			_ = unstructured.SetNestedField(c, int64(1), "readinessProbe", "timeoutSeconds")
			_ = unstructured.SetNestedField(c, "HTTP", "readinessProbe", "httpGet", "scheme")
		}
	}
	_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
	if edit != nil {
		edit(obj)
	}
	return obj
}

func setCPU(v string) func(*unstructured.Unstructured) {
	return func(obj *unstructured.Unstructured) {
		obj.SetAnnotations(map[string]string{"sidecar.kinject.dev/cpu-request": v})
	}
}

// TestValuesOnlyPatch: when only an override value changed, the patch
// holds the changed value and the record, and leaves alone what the server
// added or normalized; anything else (a missing sidecar, another template)
// gets the full update. Every patch leaves the object current.
func TestValuesOnlyPatch(t *testing.T) {
	t.Parallel()
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	cases := []struct {
		name      string
		p         *Patcher
		edit      func(*unstructured.Unstructured)
		small     bool
		wantParts []string
		notParts  []string
	}{
		{"cpu request changed", patcher(t, inject.OpInject), setCPU("500m"), true,
			[]string{`"initContainers":[{"name":"envoy","resources":{"requests":{"cpu":"500m"}}}]`},
			[]string{"imagePullPolicy", "defaultMode", "limits", `"image"`, `"volumes":[`}},
		{"override removed", patcher(t, inject.OpInject), func(obj *unstructured.Unstructured) { obj.SetAnnotations(nil) }, true,
			[]string{`"initContainers":[{"name":"envoy","resources":{"requests":{"cpu":"100m"}}}]`},
			[]string{"imagePullPolicy", "defaultMode", "limits", `"image"`}},
		{"sidecar removed by hand", patcher(t, inject.OpInject), func(obj *unstructured.Unstructured) {
			setCPU("500m")(obj)
			unstructured.RemoveNestedField(obj.Object, "spec", "template", "spec", "initContainers")
		}, false, []string{`"image":"envoyproxy/envoy:`, `"cpu":"500m"`}, nil},
		{"another template", profilePatcherImage(t, "envoyproxy/envoy:v9"), setCPU("500m"), false,
			[]string{`"image":"envoyproxy/envoy:v9"`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := stored(t, tc.edit)
			ch, err := tc.p.compute(obj)
			if err != nil || ch.entry.Action != inject.Updated {
				t.Fatalf("compute: %v %+v", err, ch.entry)
			}
			if (ch.base != nil) != tc.small {
				t.Errorf("values-only base computed: %v, want %v", ch.base != nil, tc.small)
			}
			_, data, err := ch.patch(deploy, "42")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.wantParts {
				if !strings.Contains(string(data), w) {
					t.Errorf("patch lacks %s:\n%s", w, data)
				}
			}
			for _, w := range tc.notParts {
				if strings.Contains(string(data), w) {
					t.Errorf("patch holds %s:\n%s", w, data)
				}
			}
			live, _ := json.Marshal(obj.Object)
			patched, err := applyPatch(deploy, live, data)
			if err != nil || !tc.p.current(patched) {
				t.Errorf("the patched object is not current (%v):\n%s", err, patched)
			}
		})
	}
}

// profilePatcherImage is an inject patcher whose template has another image
// (another template hash).
func profilePatcherImage(t *testing.T, image string) *Patcher {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	return &Patcher{Injector: in, Op: inject.OpInject}
}
