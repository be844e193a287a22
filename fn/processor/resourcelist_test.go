package processor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestWriterMatchesKyaml checks that resourceListWriter writes exactly
// the bytes kio.ByteWriter (KeepReaderAnnotations) writes for the same
// ResourceList, with and without new results.
func TestWriterMatchesKyaml(t *testing.T) {
	cases := map[string]string{}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "kind: ResourceList") {
			cases[p] = string(b)
		}
	}
	var stream bytes.Buffer
	if err := gen.Write(&stream, 20); err != nil {
		t.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: &stream, OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var rl bytes.Buffer
	w := kio.ByteWriter{Writer: &rl, WrappingKind: ResourceListKind, WrappingAPIVersion: "config.kubernetes.io/v1"}
	if err := w.Write(nodes); err != nil {
		t.Fatal(err)
	}
	cases["gen"] = rl.String()
	for name, text := range edgeCases {
		cases[name] = text
	}
	newResults := Results{
		{Message: "injected envoy", Severity: SeverityInfo, ResourceRef: &ResourceRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "ns"}, File: &File{Path: "a.yaml"}},
		{Message: "conflict: \"quoted\": a: b\nsecond line\n\n  indented", Severity: SeverityError, Field: &Field{Path: "spec.template"}, File: &File{Path: "dir/b.yaml", Index: 3}},
		{Message: "123", Tags: map[string]string{"z": "1", "a": "yes", "m": ""}},
		{Message: strings.Repeat("long words and more words ", 12) + "- #x {y} [z] é"},
		{Message: "- starts like a list", Severity: SeverityWarning},
	}
	for name, text := range cases {
		for _, results := range []Results{nil, newResults} {
			t.Run(name, func(t *testing.T) {
				want, got := kyamlWrite(t, text, results), ourWrite(t, text, results)
				if got != want {
					t.Errorf("output differs\n--- kyaml\n%s\n--- ours\n%s", want, got)
				}
			})
		}
	}
}

func read(t *testing.T, text string) (*kio.ByteReadWriter, []*yaml.RNode) {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: strings.NewReader(text), KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		t.Fatal(err)
	}
	return rw, items
}

// kyamlWrite is what Run did before resourceListWriter: results appended
// to the incoming node (replacing one that is not a sequence), then
// kio.ByteReadWriter.Write.
func kyamlWrite(t *testing.T, text string, results Results) string {
	t.Helper()
	rw, items := read(t, text)
	if len(results) > 0 {
		in := rw.Results
		if in == nil || in.YNode().Kind != yaml.SequenceNode {
			in = yaml.NewRNode(&yaml.Node{Kind: yaml.SequenceNode})
		}
		all, err := resultsNode(in, results)
		if err != nil {
			t.Fatal(err)
		}
		rw.Results = all
	}
	var out bytes.Buffer
	rw.Writer = &out
	if err := rw.Write(items); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func ourWrite(t *testing.T, text string, results Results) string {
	t.Helper()
	rw, items := read(t, text)
	var out bytes.Buffer
	l := resourceListWriter{apiVersion: rw.WrappingAPIVersion, kind: rw.WrappingKind,
		functionConfig: rw.FunctionConfig, results: rw.Results, newResults: results}
	if err := l.write(&out, items); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var edgeCases = map[string]string{
	"empty items": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
	"no items":    "kind: ResourceList\nfunctionConfig: {kind: ConfigMap, data: {a: b}}\n",
	"comments": `# list head
apiVersion: config.kubernetes.io/v1 # line
kind: ResourceList
items:
# before the first item
- apiVersion: v1 # av
  kind: ConfigMap
  metadata:
    name: a
    annotations: {}
  data:
    # head of k
    k: v # line of k
    # foot of k

# between items
- apiVersion: v1
  kind: Pod
  metadata: {}
  spec:
    containers:
    - name: c # c
      image: i
      # foot in the list
  # foot of the pod

# after the last item
functionConfig:
  # fc head
  kind: ConfigMap
  data:
    x: "1"
# foot of the list
`,
	"scalars": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: s
    annotations:
      a: ""
  data:
    literal: |
      one

        two indented


      three
    keep: |+
      kept

    folded: >
      a b
      c
    quoted: "a\tb\n\u00e9"
    single: 'it''s'
    empty: ""
    nul: null
    anchors: &x {a: 1}
    alias: *x
- {apiVersion: v1, kind: Secret, metadata: {name: flow}, stringData: {k: v}}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: last
  data:
    end: |+
      kept at the end


`,
	"block results": `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
results:
- message: earlier
  severity: warning
- {message: flow, severity: info}
`,
	"flow results":      "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults: [{message: earlier}]\n",
	"empty results":     "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults: []\n",
	"mapping results":   "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults: {message: odd}\n",
	"commented results": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults: # c\n# h\n- message: earlier # m\n",
	"v1alpha1":          "apiVersion: config.kubernetes.io/v1alpha1\nkind: ResourceList\nitems:\n- kind: X\n",
}

// TestRunRejectsItemsThatAreNotObjects checks that an item that is a list,
// a scalar or null, or whose metadata is not a mapping, is reported by its
// index and field before anything is processed, and that nothing is
// written.
func TestRunRejectsItemsThatAreNotObjects(t *testing.T) {
	for item, want := range map[string]string{
		"[a]":    "items[1]: not an object (a list)",
		"text":   "items[1]: not an object (a scalar)",
		"null":   "items[1]: not an object (null)",
		"[a, b]": "items[1]: not an object (a list)",
		"{apiVersion: apps/v1, kind: Deployment, metadata: [a], spec: {template: {spec: {containers: [{name: a, image: b}]}}}}": "items[1]: metadata: must be a mapping, not a list",
		"{kind: ConfigMap, metadata: {name: cm, annotations: [a]}}":                                                             "items[1]: metadata.annotations: must be a mapping, not a list",
		"{kind: ConfigMap, metadata: {name: cm, labels: x}}":                                                                    "items[1]: metadata.labels: must be a mapping, not a scalar",
	} {
		in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n- " + item + "\n"
		var out bytes.Buffer
		err := Run(Processor{}, strings.NewReader(in), &out)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("item %s: error %v, want it to contain %q", item, err, want)
		}
		if out.Len() != 0 {
			t.Errorf("item %s: wrote %q, want nothing", item, out.String())
		}
	}
}

// TestRunRejectsAFunctionConfigThatIsNotAnObject checks the same for the
// function config.
func TestRunRejectsAFunctionConfigThatIsNotAnObject(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: kinject.dev/v1alpha1\n  kind: SidecarInjection\n  metadata: [a]\n"
	var out bytes.Buffer
	err := Run(Processor{}, strings.NewReader(in), &out)
	if want := "functionConfig: metadata: must be a mapping, not a list"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to contain %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q, want nothing", out.String())
	}
}
