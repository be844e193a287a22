package admission_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settings inject.Settings
		policy   string
		want     string
	}{
		{"kinds without Pod", inject.Settings{Policy: inject.Policy{Kinds: []string{"Deployment"}}}, "", "kinds: Deployment leaves out Pod"},
		{"api groups without core", inject.Settings{Policy: inject.Policy{APIGroups: []string{"apps"}}}, "", "apiGroups: apps leaves out the core group"},
		{"set-based selector with gt", inject.Settings{Policy: inject.Policy{Selector: "replicas>3"}}, "", "has no equivalent in an admission binding"},
		{"name not an object name", inject.Settings{}, "Envoy_Sidecar", "is not a valid object name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := inject.New(inject.DefaultTemplate(), tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			_, err = admission.Compile(in, tc.policy)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile: got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCompileSelection(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Policy: inject.Policy{
		Mode: inject.OptIn, Namespaces: []string{"shop", "pay"}, Selector: "app in (web,api),!canary,tier!=db", Kinds: []string{"pod", "Deployment"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.Compile(in, "mesh")
	if err != nil {
		t.Fatal(err)
	}
	y, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"name: kinject-mesh\n", "name: kinject-mesh-conflicts\n",
		"- pay\n        - shop\n", // namespaces sorted
		"key: app\n        operator: In\n        values:\n        - api\n        - web\n",
		"key: canary\n        operator: DoesNotExist\n",
		"key: tier\n        operator: NotIn\n",
		`"not_opted_in"`, "initializer.kubernetes.io/envoy",
		"validationActions:\n  - Warn\n  - Audit\n",
		"sidecar.kinject.dev/template: " + in.TemplateHash(),
	} {
		if !strings.Contains(string(y), want) {
			t.Errorf("policy lacks %q", want)
		}
	}
	if !strings.Contains(string(y), `"host_network"`) {
		t.Error("hostNetwork Pods must be skipped by default")
	}
}

func TestCompileInjectHostNetwork(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Policy: inject.Policy{InjectHostNetwork: true}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.Compile(in, "")
	if err != nil {
		t.Fatal(err)
	}
	y, _ := p.YAML()
	if strings.Contains(string(y), "not-host-network") || strings.Contains(string(y), `"host_network"`) {
		t.Error("with injectHostNetwork the policy must not skip hostNetwork Pods")
	}
}

func TestCompileProfile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, profile, base string
		names               []string
		want, wantNot       []string
	}{
		{"default profile", "", "", []string{"kinject-envoy", "kinject-envoy", "kinject-envoy-conflicts", "kinject-envoy-conflicts"}, []string{
			`"sidecar.kinject.dev/status" in object.metadata.annotations`, `"initializer.kubernetes.io/envoy"`,
			`"sidecar.kinject.dev/cpu-request"`,
		}, []string{"mesh.sidecar"}},
		{"named profile", "mesh", "", []string{"kinject-envoy-mesh", "kinject-envoy-mesh", "kinject-envoy-mesh-conflicts", "kinject-envoy-mesh-conflicts"}, []string{
			`"mesh.sidecar.kinject.dev/status" in object.metadata.annotations`, `"mesh.sidecar.kinject.dev/inject"`,
			`"mesh.sidecar.kinject.dev/cpu-request"`, `path: "/metadata/annotations/mesh.sidecar.kinject.dev~1status"`,
			`and by profile \"mesh\": two profiles cannot add the same container`,
		}, []string{"initializer.kubernetes.io/envoy", `"sidecar.kinject.dev/inject"`, `"sidecar.kinject.dev/cpu-request"`}},
		{"named profile and base name", "logs", "agent", []string{"kinject-agent-logs", "kinject-agent-logs", "kinject-agent-logs-conflicts", "kinject-agent-logs-conflicts"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Profile: tc.profile, Policy: inject.Policy{Mode: inject.OptIn}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := admission.Compile(in, tc.base)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := p.Nodes()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, n := range nodes {
				names = append(names, n.GetName())
			}
			if strings.Join(names, ",") != strings.Join(tc.names, ",") {
				t.Errorf("objects %v, want %v", names, tc.names)
			}
			// The expressions as written, without YAML's line folding.
			objs, err := p.Objects()
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ReplaceAll(string(bytes.Join(objs, nil)), `\"`, `"`)
			for _, want := range tc.want {
				if !strings.Contains(text, strings.ReplaceAll(want, `\"`, `\\"`)) {
					t.Errorf("policy lacks %s", want)
				}
			}
			for _, not := range tc.wantNot {
				if strings.Contains(text, not) {
					t.Errorf("policy has %s", not)
				}
			}
		})
	}
}
