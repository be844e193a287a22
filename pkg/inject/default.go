package inject

import (
	"embed"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

//go:embed default_template.yaml
var defaultTemplateYAML string

// earlierDefaults holds the embedded defaults of earlier versions, each
// in a file named by its template hash. When the default changes, the one
// it replaces moves here: a policy compiled from it carries no template
// (Injector.Document), and is read back by that hash (BuiltinTemplate).
//
//go:embed earlier_defaults/*.yaml
var earlierDefaults embed.FS

// DefaultTemplateYAML returns the text of the embedded default template,
// as its users read it (inject-fn --help prints it).
func DefaultTemplateYAML() string { return defaultTemplateYAML }

// DefaultTemplate returns the embedded default template: the seed's Envoy
// sidecar with a pinned envoyproxy/envoy image and listener port 10000.
// Each call returns a template of its own, read from a copy of
// defaultTemplateDocument: default_template.yaml as yaml.v3 parses it,
// written as Go data (default_template_nodes.go, generated and kept equal
// to the text by TestDefaultTemplateCompiled), so that no program parses
// the text when it starts.
func DefaultTemplate() *template.Template {
	cfg, err := LoadConfig(yaml.NewRNode(yamltext.Clone(defaultTemplateDocument)), nil)
	if err != nil {
		panic(fmt.Sprintf("embedded default template: %v", err)) // covered by tests
	}
	cfg.Template.Source = "embedded default template"
	return cfg.Template
}

// BuiltinTemplates returns the embedded default and, after it, the
// earlier versions' defaults.
func BuiltinTemplates() []*template.Template {
	out := []*template.Template{DefaultTemplate()}
	entries, err := earlierDefaults.ReadDir("earlier_defaults")
	if err != nil {
		panic(fmt.Sprintf("embedded earlier defaults: %v", err)) // covered by tests
	}
	for _, e := range entries {
		data, err := earlierDefaults.ReadFile("earlier_defaults/" + e.Name())
		if err != nil {
			panic(fmt.Sprintf("embedded earlier default %s: %v", e.Name(), err))
		}
		t, err := ParseTemplate(data)
		if err != nil {
			panic(fmt.Sprintf("embedded earlier default %s: %v", e.Name(), err)) // covered by tests
		}
		t.Source = "embedded default template of an earlier version"
		out = append(out, t)
	}
	return out
}

// BuiltinTemplate returns the built-in default (this version's or an
// earlier one's) that, with settings applied, gives template hash want,
// or nil when none does.
func BuiltinTemplate(want string, settings Settings) *template.Template {
	for _, t := range BuiltinTemplates() {
		if in, err := New(t, settings); err == nil && in.TemplateHash() == want {
			return t
		}
	}
	return nil
}

// isBuiltinDefault reports whether the injector's template is this
// version's embedded default with its settings applied (image, native).
func (in *Injector) isBuiltinDefault() bool {
	def, err := NewDefault(Settings{Native: in.given.Native, Image: in.given.Image})
	return err == nil && def.hash == in.hash
}
