package yamltext_test

import (
	"errors"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func item(name string) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str("name"), str(name)}}
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// spliceCases edit the field "spec" of the document's root.
var spliceCases = []struct {
	name, src, want string
	edits           func(spec *yaml.Node) []yamltext.Edit
}{
	{
		name: "comments and key order kept",
		src:  "# head\nspec:   # spec\n  b: 1 # one\n  a: 2\n# tail\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(spec, spec.Content[2], "c", str("3"))}
		},
		want: "# head\nspec:   # spec\n  b: 1 # one\n  c: \"3\"\n  a: 2\n# tail\n",
	},
	{
		name: "indentation of sequences kept",
		src:  "spec:\n  items:\n  - name: a\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(spec, "items"), nil, "", item("b"))}
		},
		want: "spec:\n  items:\n  - name: a\n  - name: b\n",
	},
	{
		name: "the width of wide items kept",
		src:  "spec:\n  items:\n  -   name: a\n      x: 1\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			b := item("b")
			b.Content = append(b.Content, str("y"), str("2"))
			return []yamltext.Edit{yamltext.Insert(field(spec, "items"), nil, "", b)}
		},
		want: "spec:\n  items:\n  -   name: a\n      x: 1\n  -   name: b\n      y: \"2\"\n",
	},
	{
		name: "a tagged flow mapping over two lines deleted whole",
		src:  "spec:\n  a: !!map {x: 1,\n    y: 2}\n  b: 1\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  b: 1\n",
	},
	{
		name: "an anchored flow sequence over two lines deleted whole",
		src:  "spec:\n  a: &x [1,\n    2]\n  b: 1\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Delete(spec, spec.Content[0])}
		},
		want: "spec:\n  b: 1\n",
	},
	{
		name: "quoting of a set scalar kept",
		src:  "spec:\n  image: \"web:1\"\n  tag: 'x'\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Set(field(spec, "image"), "web:2")}
		},
		want: "spec:\n  image: \"web:2\"\n  tag: 'x'\n",
	},
	{
		name: "anchors kept",
		src:  "base: &b {x: 1}\nspec:\n  a: *b\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(spec, nil, "c", str("d"))}
		},
		want: "base: &b {x: 1}\nspec:\n  a: *b\n  c: d\n",
	},
	{
		name: "CRLF kept",
		src:  "spec:\r\n  a: 1\r\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(spec, nil, "b", str("2"))}
		},
		want: "spec:\r\n  a: 1\r\n  b: \"2\"\r\n",
	},
	{
		name: "flow separators kept",
		src:  "spec: {items: [a,  b]}\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(spec, "items"), nil, "", str("c"))}
		},
		want: "spec: {items: [a,  b,  c]}\n",
	},
	{
		name: "delete takes only its lines",
		src:  "spec:\n  items:\n  - name: a # keep\n  - name: b\n  - name: c\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			items := field(spec, "items")
			return []yamltext.Edit{yamltext.Delete(items, items.Content[1])}
		},
		want: "spec:\n  items:\n  - name: a # keep\n  - name: c\n",
	},
	{
		name: "fill and nullify an empty field",
		src:  "spec:\n  volumes:\n  other: 1\n",
		edits: func(spec *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Fill(spec, field(spec, "volumes"), seq(item("v")))}
		},
		want: "spec:\n  volumes:\n  - name: v\n  other: 1\n",
	},
}

// spliceSource decodes src and splices into it the edits made at its
// root node.
func spliceSource(t *testing.T, src string, edits func(*yaml.Node) []yamltext.Edit) ([]byte, bool, error) {
	t.Helper()
	doc, err := yamltext.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return yamltext.Splice([]byte(src), edits(doc.Content[0]), nil)
}

// parsesAsApplied checks that out, what Splice wrote for edits of src,
// parses as the tree Apply gives for the same edits (made on a fresh
// decoding of src; at picks the node they are made at).
func parsesAsApplied(t *testing.T, src string, out []byte, at func(root *yaml.Node) *yaml.Node, edits func(*yaml.Node) []yamltext.Edit) {
	t.Helper()
	edited, err := yamltext.Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := yamltext.Apply(edits(at(edited.Content[0]))); err != nil {
		t.Fatal(err)
	}
	back, err := yamltext.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	if !yamltext.Equal(back, edited) {
		t.Errorf("the text does not parse as the edited tree")
	}
}

// root is the node edits are made at when they start from the root.
func root(r *yaml.Node) *yaml.Node { return r }

// spec is the root's field spec.
func spec(r *yaml.Node) *yaml.Node { return field(r, "spec") }

// TestSplice: each case gives its text, and the text parses back as the
// tree that Apply gives for the same edits.
func TestSplice(t *testing.T) {
	t.Parallel()
	for _, tc := range spliceCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := yamltext.Decode([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := yamltext.Splice([]byte(tc.src), tc.edits(field(doc.Content[0], "spec")), nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", out, tc.want)
			}
			parsesAsApplied(t, tc.src, out, spec, tc.edits)
		})
	}
}

// TestSpliceRefuses: an edit through an alias cannot be made in place.
func TestSpliceRefuses(t *testing.T) {
	t.Parallel()
	src := []byte("base: &b\n  x: 1\nspec: *b\n")
	doc, err := yamltext.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	spec := field(doc.Content[0], "spec")
	_, _, err = yamltext.Splice(src, []yamltext.Edit{yamltext.Insert(spec, nil, "y", str("2"))}, nil)
	if !errors.Is(err, yamltext.ErrNotSpliceable) {
		t.Errorf("got %v, want ErrNotSpliceable", err)
	}
}

// TestDecode: one document, JSON's "\/" read as "/", a second document
// refused.
func TestDecode(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, value, err string }{
		{name: "yaml", src: "a: b/c\n", value: "b/c"},
		{name: "json solidus", src: `{"a": "b\/c"}`, value: "b/c"},
		{name: "empty", src: "# nothing\n"},
		{name: "two json values", src: "{\"a\": 1}\n{\"b\": 2}\n", err: "yaml: line 1: did not find expected <document start>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc, err := yamltext.Decode([]byte(tc.src))
			switch {
			case tc.err != "":
				if err == nil || err.Error() != tc.err {
					t.Fatalf("got error %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.value == "":
				if doc != nil {
					t.Errorf("got a document, want nil")
				}
			case field(doc.Content[0], "a").Value != tc.value:
				t.Errorf("got %q, want %q", field(doc.Content[0], "a").Value, tc.value)
			}
		})
	}
}

// TestSpliceRefusesAnItemUnderItsDash: an item whose content starts on
// the line after its dash is not spliced into (Splice gives
// ErrNotSpliceable, and the caller writes the document from its tree):
// the items Splice writes take their indentation from the dash and the
// content on its line.
func TestSpliceRefusesAnItemUnderItsDash(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"spec:\n  items:\n  -\n   name: a\n", "spec:\n  items:\n  -\n      name: a\n"} {
		_, _, err := spliceSource(t, src, func(root *yaml.Node) []yamltext.Edit {
			return []yamltext.Edit{yamltext.Insert(field(spec(root), "items"), nil, "", item("b"))}
		})
		if !errors.Is(err, yamltext.ErrNotSpliceable) {
			t.Errorf("%q: %v, want ErrNotSpliceable", src, err)
		}
	}
}
