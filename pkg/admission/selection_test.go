package admission_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// compiled is the part of a compiled object the selection tests read.
type compiled struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		ParamKind *struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		} `json:"paramKind"`
		ParamRef *struct {
			Name                    string `json:"name"`
			ParameterNotFoundAction string `json:"parameterNotFoundAction"`
		} `json:"paramRef"`
		MatchResources *struct {
			NamespaceSelector struct {
				MatchExpressions []term `json:"matchExpressions"`
			} `json:"namespaceSelector"`
		} `json:"matchResources"`
	} `json:"spec"`
}

type term struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

func compileObjects(t *testing.T, tmpl *template.Template, s inject.Settings) (*admission.Policy, []compiled) {
	t.Helper()
	in, err := inject.New(tmpl, s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := admission.Compile(in, "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.Objects()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]compiled, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return p, out
}

// bindings returns the namespace terms of both bindings, which must agree.
func bindingTerms(t *testing.T, objs []compiled) []term {
	t.Helper()
	var got [][]term
	for _, o := range objs {
		if o.Kind == admission.KindMutatingPolicyBinding || o.Kind == admission.KindValidatingPolicyBinding {
			if o.Spec.MatchResources == nil {
				t.Fatalf("%s has no matchResources: it would match every namespace", o.Kind)
			}
			got = append(got, o.Spec.MatchResources.NamespaceSelector.MatchExpressions)
		}
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], got[1]) {
		t.Fatalf("the two bindings must select the same namespaces: %+v", got)
	}
	return got[0]
}

func TestBindingNamespaces(t *testing.T) {
	t.Parallel()
	system := term{Key: "kubernetes.io/metadata.name", Operator: "NotIn", Values: []string{"kube-node-lease", "kube-public", "kube-system"}}
	for _, tc := range []struct {
		name   string
		policy inject.Policy
		prof   string
		want   []term
	}{
		{"default: enabled namespaces, never the system ones", inject.Policy{}, "",
			[]term{{Key: "sidecar.kinject.dev/inject", Operator: "In", Values: []string{"enabled"}}, system}},
		{"a profile has a label of its own", inject.Policy{}, "logs",
			[]term{{Key: "logs.sidecar.kinject.dev/inject", Operator: "In", Values: []string{"enabled"}}, system}},
		{"exclusions join the system namespaces", inject.Policy{ExcludeNamespaces: []string{"legacy", "kube-system"}}, "",
			[]term{{Key: "sidecar.kinject.dev/inject", Operator: "In", Values: []string{"enabled"}},
				{Key: "kubernetes.io/metadata.name", Operator: "NotIn", Values: []string{"kube-node-lease", "kube-public", "kube-system", "legacy"}}}},
		{"named namespaces need no label", inject.Policy{Namespaces: []string{"shop", "pay"}}, "",
			[]term{{Key: "kubernetes.io/metadata.name", Operator: "In", Values: []string{"pay", "shop"}}}},
		{"a named system namespace is matched", inject.Policy{Namespaces: []string{"kube-system"}}, "",
			[]term{{Key: "kubernetes.io/metadata.name", Operator: "In", Values: []string{"kube-system"}}}},
		{"named and excluded", inject.Policy{Namespaces: []string{"shop", "pay"}, ExcludeNamespaces: []string{"pay"}}, "",
			[]term{{Key: "kubernetes.io/metadata.name", Operator: "In", Values: []string{"pay", "shop"}},
				{Key: "kubernetes.io/metadata.name", Operator: "NotIn", Values: []string{"pay"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, objs := compileObjects(t, inject.DefaultTemplate(), inject.Settings{Policy: tc.policy, Profile: tc.prof})
			if got := bindingTerms(t, objs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("namespace selector:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestNamedSystemNamespaces(t *testing.T) {
	t.Parallel()
	got := admission.NamedSystemNamespaces(inject.Policy{Namespaces: []string{"shop", "kube-system", "kube-public"}, ExcludeNamespaces: []string{"kube-public"}})
	if want := []string{"kube-system"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestPolicyGate: a template that needs an object of the Pod's namespace
// gets a mutating policy that runs only where it exists, and a
// validating policy that names it; one that needs none gets neither.
func TestPolicyGate(t *testing.T) {
	t.Parallel()
	// The seed's sidecar: Envoy reading its configuration from the
	// ConfigMap envoy of the Pod's namespace.
	seed, err := inject.ParseTemplate([]byte("containers:\n- name: envoy\n  image: envoyproxy/envoy:v1.40.0\n" +
		"  volumeMounts:\n  - {name: envoy-conf, mountPath: /etc/envoy}\nvolumes:\n- name: envoy-conf\n  configMap: {name: envoy}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, objs := compileObjects(t, seed, inject.Settings{})
	if p.Requires == nil || p.Requires.Kind != template.KindConfigMap || p.Requires.Name != "envoy" {
		t.Fatalf("Requires = %+v, want the ConfigMap envoy", p.Requires)
	}
	for _, o := range objs {
		switch o.Kind {
		case admission.KindMutatingPolicy:
			if o.Spec.ParamKind == nil || o.Spec.ParamKind.Kind != "ConfigMap" || o.Spec.ParamKind.APIVersion != "v1" {
				t.Errorf("mutating policy paramKind = %+v", o.Spec.ParamKind)
			}
		case admission.KindMutatingPolicyBinding:
			if o.Spec.ParamRef == nil || o.Spec.ParamRef.Name != "envoy" || o.Spec.ParamRef.ParameterNotFoundAction != "Allow" {
				t.Errorf("mutating binding paramRef = %+v", o.Spec.ParamRef)
			}
		case admission.KindValidatingPolicy, admission.KindValidatingPolicyBinding:
			// The validating policy must run where the object is missing.
			if o.Spec.ParamKind != nil || o.Spec.ParamRef != nil {
				t.Errorf("%s must have no parameter", o.Kind)
			}
		}
		if o.Metadata.Annotations[admission.PolicyHashAnnotation] != p.Hash || p.Hash == "" {
			t.Errorf("%s: policy hash %q, want %q", o.Kind, o.Metadata.Annotations[admission.PolicyHashAnnotation], p.Hash)
		}
	}

	p, objs = compileObjects(t, inject.DefaultTemplate(), inject.Settings{})
	if p.Requires != nil {
		t.Errorf("Requires = %+v, want nil", p.Requires)
	}
	for _, o := range objs {
		if o.Spec.ParamKind != nil || o.Spec.ParamRef != nil {
			t.Errorf("%s: a template that needs nothing gets no parameter", o.Kind)
		}
	}
}

// TestPolicyHash: another setting changes the hash, the same compile does not.
func TestPolicyHash(t *testing.T) {
	t.Parallel()
	a, _ := compileObjects(t, inject.DefaultTemplate(), inject.Settings{})
	b, _ := compileObjects(t, inject.DefaultTemplate(), inject.Settings{})
	c, _ := compileObjects(t, inject.DefaultTemplate(), inject.Settings{Policy: inject.Policy{Namespaces: []string{"shop"}}})
	if a.Hash != b.Hash {
		t.Errorf("the same compile gave %s and %s", a.Hash, b.Hash)
	}
	if a.Hash == c.Hash {
		t.Errorf("other namespaces kept the hash %s", a.Hash)
	}
}
