package yamltext

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRenderCacheByContent: a small created field (an annotations mapping
// with its pairs) is rendered once per content and style, and the cached
// text is what rendering it anew gives, byte for byte.
func TestRenderCacheByContent(t *testing.T) {
	t.Parallel()
	docs := []struct{ name, src string }{
		{"two spaces", "metadata:\n  labels:\n    app: a\nspec: {}\n"},
		{"four spaces", "metadata:\n    labels:\n        app: b\nspec: {}\n"},
		{"crlf", "metadata:\r\n  labels:\r\n    app: c\r\nspec: {}\r\n"},
		{"two spaces again", "metadata:\n  labels:\n    app: d\nspec: {}\n"},
	}
	values := []func() *yaml.Node{
		func() *yaml.Node {
			return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "note"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: "a: b", Style: yaml.DoubleQuotedStyle},
			}}
		},
		func() *yaml.Node {
			return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "note"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: "a: b", Style: yaml.SingleQuotedStyle, LineComment: "# why"},
			}}
		},
	}
	var cache RenderCache
	for _, d := range docs {
		for i, value := range values {
			d, i, value := d, i, value
			t.Run(d.name, func(t *testing.T) {
				splice := func(renders *RenderCache) string {
					node, err := Decode([]byte(d.src))
					if err != nil {
						t.Fatal(err)
					}
					meta := node.Content[0].Content[1]
					out, _, err := Splice([]byte(d.src), []Edit{Insert(meta, nil, "annotations", value())}, renders)
					if err != nil {
						t.Fatalf("value %d: %v", i, err)
					}
					return string(out)
				}
				if cached, fresh := splice(&cache), splice(nil); cached != fresh {
					t.Errorf("value %d: cached\n%s\nrendered anew\n%s", i, cached, fresh)
				}
			})
		}
	}
	entries := 0
	cache.m.Range(func(any, any) bool { entries++; return true })
	// Two values in three styles: the fourth document reuses the first's.
	if entries != 6 {
		t.Errorf("the cache holds %d texts, want 6", entries)
	}
}
