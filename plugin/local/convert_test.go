package local

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// TestConversionAdd: every document with an object is converted or is an
// error; only a document the core could not read itself (and reported)
// adds nothing without one.
func TestConversionAdd(t *testing.T) {
	injected := []inject.Entry{{Item: -1, APIVersion: "v1", Kind: "Pod", Name: "p", Action: inject.Injected}}
	cases := []struct {
		name    string
		text    string
		entries []inject.Entry
		objects int
		err     string
	}{
		{"JSON with the solidus escape", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"args":["\/x"]}}`, injected, 1, ""},
		{"a List's items", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Pod, metadata: {name: b}}\n", injected, 2, ""},
		{"no object", "# nothing\n", nil, 0, ""},
		{"not Kubernetes, in a walked directory", "replicas: 3\n", []inject.Entry{{Item: -1, Action: inject.Skipped, Reason: inject.ReasonNotKubernetes}}, 0, ""},
		{"not YAML, reported by the core", "kind: [\n", []inject.Entry{{Item: -1, Action: inject.Failed, Reason: inject.ReasonInvalidYAML}}, 0, ""},
		{"not YAML, not reported", "kind: [\n", injected, 0, "cannot convert the output to json: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conv := &conversion{format: "json"}
			err := conv.add([]byte(c.text), c.entries)
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)) {
				t.Errorf("error %v, want %q", err, c.err)
			}
			if len(conv.objects) != c.objects {
				t.Errorf("%d objects, want %d", len(conv.objects), c.objects)
			}
		})
	}
}

// TestFailConversion: a document that cannot be converted is reported
// where it is, naming the file, the line and the document.
func TestFailConversion(t *testing.T) {
	entries := []inject.Entry{{Document: 1, Item: -1, APIVersion: "v1", Kind: "Pod", Name: "p", Action: inject.Injected}}
	failConversion(entries, errors.New("cannot convert the output to json: broken"))
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	r := &reporter{w: w}
	d := manifest.Document{Index: 1, Line: 5, Text: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")}
	r.add(0, "app.yaml", true, d, entries[0], printed)
	_ = w.Flush()
	if want := "app.yaml:5: pod/p error: invalid_yaml: cannot convert the output to json: broken (document 2)\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
