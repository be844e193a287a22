package yamltext

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestApplyCopiesOrigin: an insert or fill that names its Origin shares
// the origin's nodes until Apply, which puts a copy in the tree, so that
// editing the tree later leaves the origin (a template's item) unchanged,
// while an edit without Origin inserts its own value.
func TestApplyCopiesOrigin(t *testing.T) {
	t.Parallel()
	item := func() *yaml.Node {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: "envoy", Line: 3, Column: 9},
		}}
	}
	cases := []struct {
		name   string
		origin bool
		edit   func(spec, list, value *yaml.Node) Edit
		placed func(spec *yaml.Node) *yaml.Node
	}{
		{"insert item, origin", true, func(_, list, v *yaml.Node) Edit { return Insert(list, nil, "", v) },
			func(spec *yaml.Node) *yaml.Node { return spec.Content[1].Content[1] }},
		{"insert field, origin", true, func(spec, _, v *yaml.Node) Edit { return Insert(spec, nil, "volumes", v) },
			func(spec *yaml.Node) *yaml.Node { return spec.Content[3] }},
		{"fill, origin", true, func(spec, list, v *yaml.Node) Edit { return Fill(spec, list, v) },
			func(spec *yaml.Node) *yaml.Node { return spec.Content[1] }},
		{"insert item, no origin", false, func(_, list, v *yaml.Node) Edit { return Insert(list, nil, "", v) },
			func(spec *yaml.Node) *yaml.Node { return spec.Content[1].Content[1] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc, err := Decode([]byte("containers:\n- name: app\n"))
			if err != nil {
				t.Fatal(err)
			}
			spec := doc.Content[0]
			value := item()
			e := c.edit(spec, spec.Content[1], value)
			if c.origin {
				e.Origin, e.OriginN = value, 1
			}
			if err := Apply([]Edit{e}); err != nil {
				t.Fatal(err)
			}
			placed := c.placed(spec)
			if got := placed == value; got == c.origin {
				t.Fatalf("the tree holds the edit's own value: %v, want %v", got, !c.origin)
			}
			if c.origin {
				if !Equal(placed, value) {
					t.Fatalf("the copy differs from the origin")
				}
				if placed.Content[1].Line != 0 {
					t.Errorf("the copy keeps the origin's position (line %d): it is new content", placed.Content[1].Line)
				}
				placed.Content[1].Value = "changed"
				if value.Content[1].Value != "envoy" {
					t.Errorf("editing the tree changed the origin")
				}
			}
		})
	}
}
