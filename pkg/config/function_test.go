package config

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// staticAdmissionPolicy asks for the policy in its static form, in a
// SidecarInjection and in a ConfigMap alike, and like admissionPolicy it
// cannot be combined with uninject.
func TestFunctionStaticPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, doc          string
		admission, static  bool
		wantErr, wantField string
	}{
		{"typed", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: web}\nspec: {staticAdmissionPolicy: true}\n", true, true, "", ""},
		{"configmap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {staticAdmissionPolicy: \"true\"}\n", true, true, "", ""},
		{"api form", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {admissionPolicy: \"true\"}\n", true, false, "", ""},
		{"off", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {staticAdmissionPolicy: \"false\"}\n", false, false, "", ""},
		{"not a boolean", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {staticAdmissionPolicy: \"yes please\"}\n", false, false, "is not a boolean", "data.staticAdmissionPolicy"},
		{"with uninject", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {staticAdmissionPolicy: \"true\", uninject: \"true\"}\n", false, false, "cannot be combined with uninject", "staticAdmissionPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := LoadFunction(yaml.MustParse(tc.doc), nil)
			if tc.wantErr != "" {
				fe, ok := err.(*FunctionError)
				if !ok || fe.Field != tc.wantField || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v; want a FunctionError at %s saying %q", err, tc.wantField, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fn.AdmissionPolicy != tc.admission || fn.StaticPolicy != tc.static {
				t.Errorf("AdmissionPolicy %v, StaticPolicy %v; want %v, %v", fn.AdmissionPolicy, fn.StaticPolicy, tc.admission, tc.static)
			}
		})
	}
}

// TestFunctionUninjectReach: allProfiles is uninject's reach, an option
// of the function's and not a setting of the injector: with uninject the
// op removes every profile, alone it changes nothing injected.
func TestFunctionUninjectReach(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		op        inject.Op
		all       bool
	}{
		{"configmap, every profile", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {uninject: \"true\", allProfiles: \"true\"}\n", inject.OpUninjectAll, true},
		{"typed, every profile", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: web}\nspec: {uninject: true, allProfiles: true}\n", inject.OpUninjectAll, true},
		{"typed, its profile", "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: web}\nspec: {uninject: true, profile: mesh}\n", inject.OpUninject, false},
		{"allProfiles without uninject", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {allProfiles: \"true\"}\n", inject.OpInject, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := LoadFunction(yaml.MustParse(tc.doc), nil)
			if err != nil {
				t.Fatal(err)
			}
			if fn.Op != tc.op || fn.AllProfiles != tc.all {
				t.Errorf("op %v, AllProfiles %v; want %v, %v", fn.Op, fn.AllProfiles, tc.op, tc.all)
			}
		})
	}
}
