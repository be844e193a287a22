package config

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
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
