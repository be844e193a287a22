package inject_test

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/gonode"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

const compiledDefaultFile = "default_template_nodes.go"

// compiledDefaultSource is default_template_nodes.go as it should read:
// default_template.yaml parsed by yaml.v3, written by gonode, with the
// hash of the template read from the text (fromText).
func compiledDefaultSource(t *testing.T) (doc *yaml.Node, fromText *template.Template, src []byte) {
	t.Helper()
	doc = &yaml.Node{}
	if err := yaml.NewDecoder(bytes.NewReader([]byte(inject.DefaultTemplateYAML()))).Decode(doc); err != nil {
		t.Fatal(err)
	}
	src, err := gonode.Source("inject", "defaultTemplateDocument",
		"defaultTemplateDocument is default_template.yaml as yaml.v3 parses it:\nDefaultTemplate reads a copy of it instead of parsing the text.",
		"go test ./pkg/inject -run TestDefaultTemplateCompiled -update", doc)
	if err != nil {
		t.Fatal(err)
	}
	if fromText, err = inject.ParseTemplate([]byte(inject.DefaultTemplateYAML())); err != nil {
		t.Fatal(err)
	}
	src = fmt.Appendf(src, "\n// defaultTemplateHash is the default's Template.Hash, for NewDefault.\nconst defaultTemplateHash = %q\n", fromText.Hash())
	return doc, fromText, src
}

// TestDefaultTemplateCompiled: the default template compiled into the
// program is the text embedded beside it, node for node (every field of
// every node), and its generated file is current; -update rewrites the
// file, never the first check.
func TestDefaultTemplateCompiled(t *testing.T) {
	parsed, fromText, src := compiledDefaultSource(t)
	if *update {
		if err := os.WriteFile(compiledDefaultFile, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !reflect.DeepEqual(inject.CompiledDefaultDocument, parsed) {
		t.Errorf("%s is not default_template.yaml as parsed: run go test ./pkg/inject -run TestDefaultTemplateCompiled -update", compiledDefaultFile)
	}
	got, err := os.ReadFile(compiledDefaultFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Errorf("%s is not what gonode writes for default_template.yaml: run go test ./pkg/inject -run TestDefaultTemplateCompiled -update", compiledDefaultFile)
	}
	// DefaultTemplate reads the compiled tree as ParseTemplate reads the
	// text: same hash, same output on the golden corpus (golden_test.go).
	// NewDefault's injector is New's, whatever the settings, its hash
	// not computed when no image or native setting asks for another.
	if got, want := inject.DefaultTemplate().Hash(), fromText.Hash(); got != want {
		t.Errorf("DefaultTemplate hash %s, the parsed text's %s", got, want)
	}
	if inject.DefaultTemplateHash != fromText.Hash() {
		t.Errorf("defaultTemplateHash %s, the parsed text's %s", inject.DefaultTemplateHash, fromText.Hash())
	}
	native := false
	for _, s := range []inject.Settings{{}, {Profile: "mesh", Strict: true}, {Native: &native}, {Image: "envoyproxy/envoy:v1.39.0"}} {
		want, err := inject.New(fromText, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := inject.NewDefault(s)
		if err != nil {
			t.Fatal(err)
		}
		if got.TemplateHash() != want.TemplateHash() || got.TemplateHash() != got.Template().Hash() || got.Settings().Profile != want.Settings().Profile {
			t.Errorf("%+v: NewDefault hash %s (its template's %s), New's %s", s, got.TemplateHash(), got.Template().Hash(), want.TemplateHash())
		}
	}
}

// TestDefaultTemplateOwnNodes: every call of DefaultTemplate returns
// nodes of its own. A caller that edits its template (as WithValues's
// callers may) changes neither the next call's template nor the compiled
// tree.
func TestDefaultTemplateOwnNodes(t *testing.T) {
	before := yamltext.Clone(inject.CompiledDefaultDocument)
	first := inject.DefaultTemplate()
	want := inject.DefaultTemplate().Hash()
	for _, list := range [][]*yaml.Node{first.InitContainers, first.Containers, first.Volumes} {
		for _, item := range list {
			for _, n := range item.Content {
				n.Value += "-edited"
			}
		}
	}
	if first.Hash() == want {
		t.Fatal("editing the template's nodes did not change its hash: the test edits nothing")
	}
	if got := inject.DefaultTemplate().Hash(); got != want {
		t.Errorf("after an edit of an earlier call's template, DefaultTemplate hashes %s, want %s", got, want)
	}
	if !reflect.DeepEqual(inject.CompiledDefaultDocument, before) {
		t.Error("an edit of DefaultTemplate's result changed the compiled tree")
	}
}
