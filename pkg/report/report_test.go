package report_test

import (
	"io"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/report"
)

// TestError runs real documents through the core and words each error:
// the position is the file's, documents count from 1.
func TestError(t *testing.T) {
	t.Parallel()
	const first = "# the app\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n" // document 2 starts on line 6
	cases := []struct {
		name, file, doc, want string
	}{
		{"yaml", "app.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: [}\n",
			"app.yaml:10:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content"},
		{"stdin", "-", "apiVersion: v1\nkind: [\n",
			"STDIN:8:1: document 2 error: invalid_yaml: not valid YAML: did not find expected node content"},
		{"duplicate key", "app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dup\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        name: app2\n",
			"app.yaml:15: deployment.apps/dup error: invalid_object: spec.template.spec.containers[0].name: duplicate key (document 2)"},
		{"comments above", "app.yaml", "# about p\n\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: x}\n",
			"app.yaml:11:20: pod/p error: invalid_object: spec.containers: must be a list (document 2)"},
		{"list item", "app.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: ok}\n  spec: {containers: [{name: a, image: b}]}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec: {containers: x}\n",
			"app.yaml:16:22: pod/p error: invalid_object: spec.containers: must be a list (document 2, item 2)"},
		{"container conflict", "app.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: a\n  - name: envoy\n    image: b\n",
			`app.yaml:13:5: pod/p error: conflict: spec.initContainers: container "envoy" already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added) (document 2)`},
		{"port conflict", "app.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: a\n    ports:\n    - {containerPort: 10000}\n",
			`app.yaml:14:7: pod/p error: conflict: spec.containers: sidecar "envoy" port 10000 is already used by container "app" (document 2)`},
		{"stats port conflict", "app.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: app\n    image: a\n    ports:\n    - {containerPort: 9902}\n",
			`app.yaml:14:7: pod/p error: conflict: spec.containers: sidecar "envoy" port 9902 is already used by container "app" (document 2)`},
		{"no kind", "app.yaml", "apiVersion: v1\nmetadata: {name: x}\n",
			"app.yaml:6: document 2 error: invalid_object: kind: is required"},
	}
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			err := manifest.ProcessDocuments(strings.NewReader(first+c.doc), io.Discard, func(d manifest.Document) []byte {
				_, entries := in.ProcessText(inject.OpInject, d.Text, d.Index)
				for _, e := range entries {
					if e.Action == inject.Failed {
						got = append(got, report.Error(c.file, d, e))
					}
				}
				return d.Text
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("got %q\nwant [%q]", got, c.want)
			}
		})
	}
}

func TestObject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		e    inject.Entry
		want string
	}{
		{"core group", inject.Entry{APIVersion: "v1", Kind: "Pod", Name: "p", Item: -1}, "pod/p"},
		{"named group", inject.Entry{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Item: -1}, "deployment.apps/web"},
		{"no name", inject.Entry{Document: 2, APIVersion: "v1", Kind: "Pod", Item: -1}, "document 3"},
		{"list item", inject.Entry{Document: 0, Item: 4}, "document 1, item 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := report.Object(c.e); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestReasoned: the reason code goes first once, as on a live object's line.
func TestReasoned(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		reason inject.Reason
		msg    string
		want   string
	}{
		{"reason first", inject.ReasonConflict, "spec.containers: port 80 is in use", "conflict: spec.containers: port 80 is in use"},
		{"already said", inject.ReasonConflict, "conflict: the object was changed", "conflict: the object was changed"},
		{"no reason", "", "kind: is required", "kind: is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := report.Reasoned(c.reason, c.msg); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
