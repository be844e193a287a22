package live

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

const deploymentYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod, resourceVersion: "42"}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx}
`

func object(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func patcher(t *testing.T, op inject.Op) *Patcher {
	t.Helper()
	return settingsPatcher(t, op, inject.Settings{})
}

// classicPatcher injects the default as a classic sidecar: a second item
// of the app's containers list, where strategic merge and merge patches
// differ.
func classicPatcher(t *testing.T, op inject.Op) *Patcher {
	t.Helper()
	classic := false
	return settingsPatcher(t, op, inject.Settings{Native: &classic})
}

func settingsPatcher(t *testing.T, op inject.Op, s inject.Settings) *Patcher {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), s)
	if err != nil {
		t.Fatal(err)
	}
	return &Patcher{Injector: in, Op: op}
}

func TestPatch(t *testing.T) {
	t.Parallel()
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	custom := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Deployment"}
	cases := []struct {
		name      string
		p         *Patcher
		gvk       schema.GroupVersionKind
		wantType  string
		wantParts []string
		notParts  []string
	}{
		{"built-in kind: strategic merge", classicPatcher(t, inject.OpInject), deploy, "application/strategic-merge-patch+json",
			[]string{`"$setElementOrder/containers":[{"name":"app"},{"name":"envoy"}]`, `"resourceVersion":"42"`, `"name":"envoy"`},
			[]string{`"replicas"`, `"image":"nginx"`}},
		{"custom kind: merge, guarded", classicPatcher(t, inject.OpInject), custom, "application/merge-patch+json",
			[]string{`"resourceVersion":"42"`, `"name":"envoy"`, `"image":"nginx"`}, // merge patches replace lists
			[]string{`"replicas"`, `$setElementOrder`}},
		// The native default is a list of its own: the app's containers
		// are not in the patch at all.
		{"native, built-in kind", patcher(t, inject.OpInject), deploy, "application/strategic-merge-patch+json",
			[]string{`"initContainers":[{`, `"restartPolicy":"Always"`, `"resourceVersion":"42"`},
			[]string{`"replicas"`, `"image":"nginx"`, `"containers"`}},
		{"native, custom kind", patcher(t, inject.OpInject), custom, "application/merge-patch+json",
			[]string{`"initContainers":[{`, `"resourceVersion":"42"`},
			[]string{`"replicas"`, `"image":"nginx"`, `$setElementOrder`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ch, err := tc.p.compute(object(t, deploymentYAML))
			if err != nil || ch.entry.Action != inject.Injected {
				t.Fatalf("compute: %v %+v", err, ch)
			}
			pt, data, err := ch.patch(tc.gvk, "42")
			if err != nil {
				t.Fatal(err)
			}
			if string(pt) != tc.wantType {
				t.Errorf("patch type %s, want %s", pt, tc.wantType)
			}
			for _, w := range tc.wantParts {
				if !strings.Contains(string(data), w) {
					t.Errorf("patch lacks %s:\n%s", w, data)
				}
			}
			for _, w := range tc.notParts {
				if strings.Contains(string(data), w) {
					t.Errorf("patch has %s:\n%s", w, data)
				}
			}
		})
	}
}

func TestApplyBody(t *testing.T) {
	t.Parallel()
	obj := object(t, deploymentYAML)
	ch, err := patcher(t, inject.OpInject).compute(obj)
	if err != nil {
		t.Fatal(err)
	}
	body, err := applyBody(obj, ch, inject.OpInject)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	tmpl, _, _ := unstructured.NestedMap(m, "spec", "template")
	names := []string{}
	for _, c := range tmpl["spec"].(map[string]any)["initContainers"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	if strings.Join(names, ",") != "envoy" {
		t.Errorf("apply configuration owns containers %v, want only envoy", names)
	}
	if _, ok := tmpl["metadata"].(map[string]any)["labels"]; ok {
		t.Error("apply configuration claims the app's labels")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(m, "spec", "replicas"); found {
		t.Error("apply configuration claims spec.replicas")
	}

	injected, err := ch.object()
	if err != nil {
		t.Fatal(err)
	}
	back, err := patcher(t, inject.OpUninject).compute(injected)
	if err != nil || back.entry.Action != inject.Uninjected {
		t.Fatalf("uninject: %v %+v", err, back)
	}
	un, err := applyBody(injected, back, inject.OpUninject)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod"}}`; string(un) != want {
		t.Errorf("uninject apply configuration %s, want %s", un, want)
	}
}

func TestResultString(t *testing.T) {
	t.Parallel()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("no"))
	cases := []struct {
		name string
		r    Result
		want string
	}{
		{"injected", Result{Ref: "deployment.apps/web", Action: inject.Injected}, "deployment.apps/web injected"},
		{"server dry run", Result{Ref: "deployment.apps/web", Action: inject.Injected, DryRun: dryrun.Server}, "deployment.apps/web injected (server dry run)"},
		{"skipped", Result{Ref: "pod/x", Action: inject.Skipped, Reason: inject.ReasonHostNetwork}, "pod/x skipped: host_network"},
		{"via owner", Result{Ref: "deployment.apps/web", Action: inject.Unchanged, Via: "pod/x via replicaset.apps/web-1"}, "deployment.apps/web unchanged (from pod/x via replicaset.apps/web-1)"},
		{"api error", fail(Result{Ref: "deployment.apps/web"}, "", forbidden), `deployment.apps/web error: forbidden: deployments.apps "web" is forbidden: no`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.r.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
