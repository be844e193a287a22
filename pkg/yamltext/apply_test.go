package yamltext_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// TestApplyInsert: Apply inserts before the anchor child, the first one
// included, or at the end; an empty flow collection that gets content
// turns block style, one that had content stays flow; an anchor that is
// not a child is an error.
func TestApplyInsert(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, src string
		edit      func(root *yaml.Node) yamltext.Edit
		want      string // the root, encoded
	}{
		{"before the first key", "a: 1\nb: 2\n",
			func(r *yaml.Node) yamltext.Edit { return yamltext.Insert(r, r.Content[0], "c", str("3")) },
			"c: \"3\"\na: 1\nb: 2\n"},
		{"before the first item", "l:\n- a\n- b\n",
			func(r *yaml.Node) yamltext.Edit {
				l := field(r, "l")
				return yamltext.Insert(l, l.Content[0], "", str("c"))
			},
			"l:\n- c\n- a\n- b\n"},
		{"at the end of an empty flow list", "l: []\n",
			func(r *yaml.Node) yamltext.Edit { return yamltext.Insert(field(r, "l"), nil, "", str("c")) },
			"l:\n- c\n"},
		{"into an empty flow mapping", "m: {}\n",
			func(r *yaml.Node) yamltext.Edit { return yamltext.Insert(field(r, "m"), nil, "k", str("v")) },
			"m:\n  k: v\n"},
		{"at the end of a flow list", "l: [a]\n",
			func(r *yaml.Node) yamltext.Edit { return yamltext.Insert(field(r, "l"), nil, "", str("c")) },
			"l: [a, c]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc, err := yamltext.Decode([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if err := yamltext.Apply([]yamltext.Edit{c.edit(doc.Content[0])}); err != nil {
				t.Fatal(err)
			}
			out, err := yaml.Marshal(doc.Content[0])
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != c.want {
				t.Errorf("got\n%q\nwant\n%q", out, c.want)
			}
		})
	}
	doc, err := yamltext.Decode([]byte("a: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yamltext.Apply([]yamltext.Edit{yamltext.Insert(doc.Content[0], str("a"), "c", str("3"))}); err == nil {
		t.Errorf("an insert before a node that is not a child: no error")
	}
}
