package inject_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// reread parses a document Injector.Document wrote and builds its injector.
func reread(t *testing.T, doc []byte) *inject.Injector {
	t.Helper()
	cfg, err := inject.ParseConfig(doc, nil)
	if err != nil {
		t.Fatalf("the document does not parse: %v\n%s", err, doc)
	}
	if cfg.Template == nil {
		t.Fatalf("the document has no template:\n%s", doc)
	}
	in, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		t.Fatalf("the document's injector: %v\n%s", err, doc)
	}
	return in
}

// TestDocumentRoundTrip: the document an injector writes (the one an
// admission policy carries) reads back into an injector with the same
// template hash and settings, that injects every golden input and every
// profile corpus into the same bytes; written again it is the same
// document.
func TestDocumentRoundTrip(t *testing.T) {
	native, classic := true, false
	type variant struct {
		name string
		edit func(*inject.Settings)
	}
	variants := []variant{
		{"as-is", func(*inject.Settings) {}},
		{"image", func(s *inject.Settings) { s.Image = "registry.example/envoy:new" }},
		{"native", func(s *inject.Settings) { s.Native = &native }},
		{"classic", func(s *inject.Settings) { s.Native = &classic }},
		{"selection", func(s *inject.Settings) {
			s.Policy.Mode = inject.OptIn
			s.Policy.Kinds = []string{"Deployment", "Pod"}
			s.Policy.ExcludeNamespaces = []string{"legacy"}
			s.Policy.InjectHostNetwork = true
			s.Strict = false
		}},
	}
	checked := 0
	for _, c := range loadGoldenCases(t) {
		for _, v := range variants {
			settings := c.injector.Settings()
			v.edit(&settings)
			orig, err := inject.New(c.injector.Template(), settings)
			if err != nil {
				continue // a variant the case's template refuses (strict and native, say)
			}
			doc, err := orig.Document()
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, v.name, err)
			}
			back := reread(t, doc)
			if back.TemplateHash() != orig.TemplateHash() {
				t.Errorf("%s/%s: template hash %s read back as %s\n%s", c.name, v.name, orig.TemplateHash(), back.TemplateHash(), doc)
			}
			want := orig.Settings()
			want.Image, want.Native = "", nil // applied to the template the document holds
			if got := back.Settings(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%s: settings %+v read back as %+v", c.name, v.name, want, got)
			}
			wantOut, _ := run(t, orig, inject.OpInject, c.input)
			gotOut, _ := run(t, back, inject.OpInject, c.input)
			if !bytes.Equal(gotOut, wantOut) {
				t.Errorf("%s/%s: the document's injector writes other bytes:\n%s\nwant:\n%s", c.name, v.name, gotOut, wantOut)
			}
			again, err := back.Document()
			if err != nil || !bytes.Equal(again, doc) {
				t.Errorf("%s/%s: written again the document differs (%v):\n%s\nfirst:\n%s", c.name, v.name, err, again, doc)
			}
			checked++
		}
	}
	for _, c := range loadProfileCases(t) {
		var backs []*inject.Injector
		for _, in := range c.profiles {
			doc, err := in.Document()
			if err != nil {
				t.Fatal(err)
			}
			backs = append(backs, reread(t, doc))
			checked++
		}
		want, _ := injectAll(t, c.profiles, c.input)
		got, _ := injectAll(t, backs, c.input)
		if !bytes.Equal(got, want) {
			t.Errorf("profiles %s: the documents' injectors write other bytes", c.name)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d injectors were checked: the corpus went missing", checked)
	}
	t.Logf("%d injectors written and read back", checked)
}
