package inject_test

import (
	"sync"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/template"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestPrepareDefaultTemplate: the template parsed ahead is the default,
// handed to one caller only; the others parse their own, so that no two
// callers share (and edit) one template, however the calls interleave.
func TestPrepareDefaultTemplate(t *testing.T) {
	want := inject.DefaultTemplate()
	inject.PrepareDefaultTemplate()
	inject.PrepareDefaultTemplate() // a second call prepares nothing more
	got := make([]*template.Template, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = inject.DefaultTemplate()
		}()
	}
	wg.Wait()
	seen := map[*template.Template]bool{want: true}
	for i, tmpl := range got {
		if seen[tmpl] {
			t.Fatalf("call %d got a template another caller has", i)
		}
		seen[tmpl] = true
		if tmpl.Hash() != want.Hash() || tmpl.Source != want.Source {
			t.Errorf("call %d: hash %s, source %q; want the default's %s, %q", i, tmpl.Hash(), tmpl.Source, want.Hash(), want.Source)
		}
	}
}

// TestNeedsCEL: the default's expressions run without cel-go; a template
// with an expression beyond the subset, or one not precompiled, may not.
func TestNeedsCEL(t *testing.T) {
	if inject.DefaultTemplate().NeedsCEL() {
		t.Error("the default template needs cel-go")
	}
	for _, expr := range []string{"object.metadata.labels.app.upperAscii()", "object.kind == 'Pod' ? 'p' : 'o'"} {
		tp, err := inject.ParseTemplate([]byte("containers:\n- name: proxy\n  image: example/proxy:1.0\n  args: [--name, x]\n" +
			"parameters:\n- annotation: name\n  field: containers[proxy].args[--name]\n  type: string\n  expression: " + quote(expr) + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if !tp.NeedsCEL() {
			t.Errorf("%s: the template is said to need no cel-go", expr)
		}
	}
}
