package inject

import (
	"embed"
	"fmt"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
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

// DefaultTemplateYAML returns the text of the embedded default template.
func DefaultTemplateYAML() string { return defaultTemplateYAML }

// DefaultTemplate returns the embedded default template: the seed's Envoy
// sidecar with a pinned envoyproxy/envoy image and listener port 10000.
// Each call returns a template of its own: the one PrepareDefaultTemplate
// parsed ahead, if any is left, or a new one.
func DefaultTemplate() *template.Template {
	prepared.Lock()
	ch := prepared.ch
	prepared.ch = nil
	prepared.Unlock()
	if ch != nil {
		return <-ch
	}
	return parseDefaultTemplate()
}

// prepared is the default template being parsed ahead, nil when none is.
var prepared struct {
	sync.Mutex
	ch chan *template.Template
}

// PrepareDefaultTemplate starts parsing the default template in the
// background, for the next DefaultTemplate call: a program that will most
// likely use it (inject-fn, whose input names no other template in most
// pipelines) parses it on a second core while it reads its input, which
// takes about as long. A template prepared and not used costs that parse's
// CPU, no more.
func PrepareDefaultTemplate() {
	prepared.Lock()
	defer prepared.Unlock()
	if prepared.ch != nil {
		return
	}
	ch := make(chan *template.Template, 1)
	prepared.ch = ch
	go func() { ch <- parseDefaultTemplate() }()
}

func parseDefaultTemplate() *template.Template {
	t, err := ParseTemplate([]byte(defaultTemplateYAML))
	if err != nil {
		panic(fmt.Sprintf("embedded default template: %v", err)) // covered by tests
	}
	t.Source = "embedded default template"
	return t
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
	def, err := New(DefaultTemplate(), Settings{Native: in.given.Native, Image: in.given.Image})
	return err == nil && def.hash == in.hash
}
