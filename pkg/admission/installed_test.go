package admission_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/yaml"
)

// mutatingAnnotations compiles in and returns the mutating policy's
// annotations as the API server stores them.
func mutatingAnnotations(t *testing.T, in *inject.Injector) map[string]string {
	t.Helper()
	p, err := admission.Compile(in, "")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := p.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Kind     string
		Metadata struct{ Annotations map[string]string }
	}
	if err := yaml.Unmarshal(objs[0], &meta); err != nil || meta.Kind != admission.KindMutatingPolicy {
		t.Fatalf("the first object is %q (%v), not the mutating policy", meta.Kind, err)
	}
	return meta.Metadata.Annotations
}

// TestInstalledConfig: the configuration an installed policy carries reads
// back into the injector it was compiled from; an edited one is refused
// with the annotation named; a policy without one gives nil.
func TestInstalledConfig(t *testing.T) {
	settings := inject.Settings{Image: "registry.example/envoy:new", Profile: "mesh"}
	settings.Policy.ExcludeNamespaces = []string{"legacy"}
	in, err := inject.New(inject.DefaultTemplate(), settings)
	if err != nil {
		t.Fatal(err)
	}
	ann := mutatingAnnotations(t, in)
	cfg, err := admission.InstalledConfig("kinject-envoy-mesh", ann)
	if err != nil {
		t.Fatal(err)
	}
	back, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if back.TemplateHash() != in.TemplateHash() || back.Profile() != "mesh" || !reflect.DeepEqual(back.Settings().Policy, in.Settings().Policy) {
		t.Errorf("read back: template %s profile %q policy %+v; want %s %q %+v", back.TemplateHash(), back.Profile(), back.Settings().Policy, in.TemplateHash(), "mesh", in.Settings().Policy)
	}

	edited := map[string]string{}
	for k, v := range ann {
		edited[k] = v
	}
	edited[admission.ConfigAnnotation] = strings.Replace(ann[admission.ConfigAnnotation], "registry.example/envoy:new", "registry.example/envoy:other", 1)
	_, err = admission.InstalledConfig("kinject-envoy-mesh", edited)
	if err == nil || !strings.Contains(err.Error(), `metadata.annotations["sidecar.kinject.dev/config"]`) || !strings.Contains(err.Error(), "was changed") {
		t.Errorf("an edited configuration: %v", err)
	}
	edited[admission.ConfigAnnotation] = "spec: [1"
	if _, err := admission.InstalledConfig("x", edited); err == nil || !strings.Contains(err.Error(), "mutatingadmissionpolicy/x") {
		t.Errorf("a configuration that does not parse: %v", err)
	}
	delete(edited, admission.ConfigAnnotation)
	if cfg, err := admission.InstalledConfig("x", edited); cfg != nil || err != nil {
		t.Errorf("a policy without a configuration: %v, %v", cfg, err)
	}
}

// TestInstalledConfigNamesADefault: a policy compiled from a built-in
// default carries no template, and reads back to the default its hash
// names, an earlier version's included; a hash no default gives is
// refused, never taken as this version's default.
func TestInstalledConfigNamesADefault(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Image: "registry.example/envoy:new"})
	if err != nil {
		t.Fatal(err)
	}
	ann := mutatingAnnotations(t, in)
	if doc := ann[admission.ConfigAnnotation]; strings.Contains(doc, "template") || strings.Contains(doc, "\n") {
		t.Errorf("the default's policy carries more than its settings: %s", doc)
	}
	builtins := inject.BuiltinTemplates()
	earlier, err := inject.New(builtins[len(builtins)-1], inject.Settings{Image: "registry.example/envoy:new"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*inject.Injector{in, earlier} {
		ann[admission.TemplateHashAnnotation] = want.TemplateHash()
		cfg, err := admission.InstalledConfig("kinject-envoy", ann)
		if err != nil {
			t.Fatal(err)
		}
		back, err := inject.New(cfg.Template, cfg.Settings)
		if err != nil || back.TemplateHash() != want.TemplateHash() || cfg.Settings.Image != "registry.example/envoy:new" {
			t.Errorf("template %s read back as %s (%v)", want.TemplateHash(), back.TemplateHash(), err)
		}
	}
	ann[admission.TemplateHashAnnotation] = "0123456789abcdef0123"
	if _, err := admission.InstalledConfig("kinject-envoy", ann); err == nil || !strings.Contains(err.Error(), "a newer kubectl-inject compiled the policy") ||
		!strings.Contains(err.Error(), "but the policy injects template 0123456789abcdef0123") {
		t.Errorf("a hash no built-in default gives: %v", err)
	}
}
