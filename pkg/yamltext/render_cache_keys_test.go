package yamltext

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRenderCacheKeys: texts cached across documents are told apart by
// everything they depend on: a string pair by its value whatever its
// origin, an item by its tag, a created field by its content; and a
// field is cached by content only up to maxContentKey bytes.
func TestRenderCacheKeys(t *testing.T) {
	t.Parallel()
	scalar := func(tag, value string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value} }
	origin := scalar("!!str", "origin")
	for _, c := range []struct {
		name  string
		src   string
		edits []func(root *yaml.Node) Edit
		want  []string
	}{
		{"string pairs of one origin", "m:\n  a: 1\n", []func(*yaml.Node) Edit{
			func(r *yaml.Node) Edit {
				e := Insert(r.Content[1], nil, "k", scalar("!!str", "x"))
				e.Origin, e.OriginN = origin, 1
				return e
			},
			func(r *yaml.Node) Edit {
				e := Insert(r.Content[1], nil, "k", scalar("!!str", "y"))
				e.Origin, e.OriginN = origin, 1
				return e
			},
		}, []string{"m:\n  a: 1\n  k: x\n", "m:\n  a: 1\n  k: y\n"}},
		{"items of one value and two tags", "l:\n- a\n", []func(*yaml.Node) Edit{
			func(r *yaml.Node) Edit { return Insert(r.Content[1], nil, "", scalar("!!str", "1")) },
			func(r *yaml.Node) Edit { return Insert(r.Content[1], nil, "", scalar("!!int", "1")) },
		}, []string{"l:\n- a\n- \"1\"\n", "l:\n- a\n- 1\n"}},
		{"created fields of two contents", "m:\n  a: 1\n", []func(*yaml.Node) Edit{
			func(r *yaml.Node) Edit {
				return Insert(r.Content[1], nil, "f", &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{scalar("!!str", "x"), scalar("!!int", "1")}})
			},
			func(r *yaml.Node) Edit {
				return Insert(r.Content[1], nil, "f", &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{scalar("!!str", "x"), scalar("!!int", "2")}})
			},
		}, []string{"m:\n  a: 1\n  f:\n    x: 1\n", "m:\n  a: 1\n  f:\n    x: 2\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var cache RenderCache
			for i, edit := range c.edits {
				doc, err := Decode([]byte(c.src))
				if err != nil {
					t.Fatal(err)
				}
				out, _, err := Splice([]byte(c.src), []Edit{edit(doc.Content[0])}, &cache)
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != c.want[i] {
					t.Errorf("document %d: got %q, want %q", i, out, c.want[i])
				}
			}
		})
	}
	// A scalar's key is its fields and 16 bytes of separators and counts.
	if _, ok := contentKey(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.Repeat("x", maxContentKey-16)}); !ok {
		t.Errorf("a key of maxContentKey bytes is refused")
	}
	if _, ok := contentKey(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.Repeat("x", maxContentKey-15)}); ok {
		t.Errorf("a key longer than maxContentKey is taken")
	}
}
