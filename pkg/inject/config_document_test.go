package inject_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// reread parses a document Injector.Document wrote and builds its
// injector. A document without a template names the built-in default, as
// every reader takes it.
func reread(t *testing.T, doc []byte) (in *inject.Injector, carriesTemplate bool) {
	t.Helper()
	cfg, err := inject.ParseConfig(doc, nil)
	if err != nil {
		t.Fatalf("the document does not parse: %v\n%s", err, doc)
	}
	carriesTemplate = cfg.Template != nil
	if !carriesTemplate {
		cfg.Template = inject.DefaultTemplate()
	}
	in, err = inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		t.Fatalf("the document's injector: %v\n%s", err, doc)
	}
	return in, carriesTemplate
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
		{"every setting", func(s *inject.Settings) {
			s.Policy.Mode = inject.OptOut
			s.Policy.Kinds = []string{"Deployment", "Rollout"}
			s.Policy.APIGroups = []string{"apps", "argoproj.io"}
			s.Policy.Namespaces = []string{"shop", "legacy"}
			s.Policy.ExcludeNamespaces = []string{"legacy"}
			s.Policy.Selector = "tier in (web,api)"
			s.Policy.InjectHostNetwork = true
			s.PodTemplatePaths = []inject.PodTemplatePath{{Group: "argoproj.io", Kind: "Rollout", Path: []string{"spec", "template"}}}
			s.Image = "registry.example/envoy:every"
			s.Native = &native
		}},
	}
	checked := 0
	for _, c := range loadGoldenCases(t) {
		for _, v := range variants {
			settings := c.injector.Settings()
			v.edit(&settings)
			orig, err := inject.New(c.injector.Template(), settings)
			if err != nil {
				// Every template of the corpus takes every variant: a
				// refusal would leave the case unchecked.
				t.Errorf("%s/%s: %v", c.name, v.name, err)
				continue
			}
			doc, err := orig.Document()
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, v.name, err)
			}
			back, carried := reread(t, doc)
			if back.TemplateHash() != orig.TemplateHash() {
				t.Errorf("%s/%s: template hash %s read back as %s\n%s", c.name, v.name, orig.TemplateHash(), back.TemplateHash(), doc)
			}
			want := orig.Settings()
			if carried {
				want.Image, want.Native = "", nil // applied to the template the document holds
			}
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
			back, _ := reread(t, doc)
			backs = append(backs, back)
			checked++
		}
		want, _ := injectAll(t, c.profiles, c.input)
		got, _ := injectAll(t, backs, c.input)
		if !bytes.Equal(got, want) {
			t.Errorf("profiles %s: the documents' injectors write other bytes", c.name)
		}
	}
	want := len(variants)*corpusDirs(t, "testdata/golden") + profileDocuments(t)
	t.Logf("%d injectors written and read back", checked)
	if checked != want {
		t.Errorf("%d injectors checked, want %d: each variant of each golden case and each profile of the profile corpus", checked, want)
	}
}

// corpusDirs counts the case directories of a corpus, as the disk holds
// them.
func corpusDirs(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() {
			n++
		}
	}
	return n
}

// profileDocuments counts the profiles of the profile corpus: the lines
// that open a SidecarInjection in its configs.
func profileDocuments(t *testing.T) int {
	t.Helper()
	files, err := filepath.Glob("testdata/profiles/*/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		for _, line := range strings.Split(string(readFile(t, f)), "\n") {
			if strings.TrimRight(line, "\r") == "kind: SidecarInjection" {
				n++
			}
		}
	}
	return n
}

// TestEarlierDocumentForms: a document an earlier release wrote, with
// booleans and lists as strings, reads into the same settings as the one
// written today.
func TestEarlierDocumentForms(t *testing.T) {
	earlier := `{apiVersion: kinject.dev/v1alpha1, kind: SidecarInjection, metadata: {name: default}, spec: {mode: opt-in, kinds: "Deployment, Job", injectHostNetwork: "true", strict: "false", native: "true", podTemplatePaths: "Rollout.argoproj.io=spec.template"}}`
	cfg, err := inject.ParseConfig([]byte(earlier), nil)
	if err != nil {
		t.Fatal(err)
	}
	native := true
	want := inject.Settings{
		Policy: inject.Policy{Mode: inject.OptIn, Kinds: []string{"Deployment", "Job"}, InjectHostNetwork: true},
		Native: &native, PodTemplatePaths: []inject.PodTemplatePath{{Group: "argoproj.io", Kind: "Rollout", Path: []string{"spec", "template"}}},
	}
	if !reflect.DeepEqual(cfg.Settings, want) {
		t.Errorf("read %+v, want %+v", cfg.Settings, want)
	}
	in, err := inject.New(inject.DefaultTemplate(), cfg.Settings)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := in.Document()
	if err != nil {
		t.Fatal(err)
	}
	const today = `{apiVersion: kinject.dev/v1alpha1, kind: SidecarInjection, metadata: {name: default}, spec: {mode: opt-in, kinds: [Deployment, Job], injectHostNetwork: true, podTemplatePaths: [Rollout.argoproj.io=spec.template], native: true}}`
	if string(doc) != today {
		t.Errorf("written today:\n%s\nwant\n%s", doc, today)
	}
}

// TestDocumentNamesTheDefault: the embedded default (with any image,
// native or selection setting) is written as a one-line document without
// a template, which reads back to the same template hash; any other
// template is spelled out whole.
func TestDocumentNamesTheDefault(t *testing.T) {
	native := true
	for _, s := range []inject.Settings{
		{},
		{Image: "registry.example/envoy:new"},
		{Native: &native, Profile: "mesh"},
		{Policy: inject.Policy{Mode: inject.OptIn, ExcludeNamespaces: []string{"legacy"}}},
	} {
		in, err := inject.New(inject.DefaultTemplate(), s)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := in.Document()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(doc, []byte("\n")) || bytes.Contains(doc, []byte("template")) || !bytes.HasPrefix(doc, []byte("{apiVersion: kinject.dev/v1alpha1, kind: SidecarInjection")) {
			t.Errorf("%+v: the default's document is not one line without a template:\n%s", s, doc)
		}
		back, carried := reread(t, doc)
		if carried || back.TemplateHash() != in.TemplateHash() || !reflect.DeepEqual(back.Settings(), in.Settings()) {
			t.Errorf("%+v: read back as template %s settings %+v; want %s %+v", s, back.TemplateHash(), back.Settings(), in.TemplateHash(), in.Settings())
		}
	}
	// A template one field away from the default is written whole.
	tmpl, err := inject.ParseTemplate([]byte(strings.Replace(inject.DefaultTemplateYAML(), "periodSeconds: 5", "periodSeconds: 6", 1)))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tmpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := in.Document()
	if err != nil {
		t.Fatal(err)
	}
	if back, carried := reread(t, doc); !carried || back.TemplateHash() != in.TemplateHash() || !bytes.Contains(doc, []byte("periodSeconds: 6")) {
		t.Errorf("a changed template is not carried whole:\n%s", doc)
	}
}

// TestEarlierDefaults: each earlier default is named by its template hash,
// which differs from the current default's, and BuiltinTemplate finds every
// built-in default by its hash, with and without an image setting.
func TestEarlierDefaults(t *testing.T) {
	entries, err := os.ReadDir("earlier_defaults")
	if err != nil {
		t.Fatal(err)
	}
	builtins := inject.BuiltinTemplates()
	if len(builtins) != len(entries)+1 || len(entries) == 0 {
		t.Fatalf("%d built-in templates for %d earlier defaults", len(builtins), len(entries))
	}
	seen := map[string]bool{}
	for i, b := range builtins {
		for _, s := range []inject.Settings{{}, {Image: "registry.example/envoy:new"}} {
			in, err := inject.New(b, s)
			if err != nil {
				t.Fatal(err)
			}
			if seen[in.TemplateHash()] {
				t.Errorf("two built-in defaults give template %s", in.TemplateHash())
			}
			seen[in.TemplateHash()] = true
			if got := inject.BuiltinTemplate(in.TemplateHash(), s); got == nil {
				t.Errorf("built-in default %d (settings %+v) is not found by its hash %s", i, s, in.TemplateHash())
			}
		}
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("earlier_defaults", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := inject.ParseTemplate(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		in, err := inject.New(tmpl, inject.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		if want := in.TemplateHash() + ".yaml"; e.Name() != want {
			t.Errorf("earlier_defaults/%s holds template %s: name it %s (an earlier default is never edited)", e.Name(), in.TemplateHash(), want)
		}
	}
	if inject.BuiltinTemplate("0000000000000000000f", inject.Settings{}) != nil {
		t.Error("a hash no built-in default gives found a template")
	}
}
