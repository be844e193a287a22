package inject

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// TestDeepCopy: a copy has the same content, nothing shared with the
// original (growing a copied list leaves its neighbours alone), and an
// alias shares the copy of its anchor. Copy drops positions; Clone keeps
// every field, so that the clone is the original as parsed.
func TestDeepCopy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, src     string
		copy          func(*yaml.Node) *yaml.Node
		keepPositions bool
	}{
		{"tree", "a: [1, 2, {b: c}]\nd: {e: [], f: {}}\ng: x\n", yamltext.Copy, false},
		{"aliases", "a: &x [1, {b: c}]\nd: *x\n", yamltext.Copy, false},
		{"clone tree", "a: [1, 2, {b: c}] # c\nd: {e: [], f: {}}\ng: x\n", yamltext.Clone, true},
		{"clone aliases", "a: &x [1, {b: c}]\nd: *x\n", yamltext.Clone, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(c.src), &doc); err != nil {
				t.Fatal(err)
			}
			orig := doc.Content[0]
			cp := c.copy(orig)
			if !yamltext.Equal(orig, cp) {
				t.Fatal("the copy's content differs")
			}
			if c.keepPositions && !reflect.DeepEqual(orig, cp) {
				t.Fatal("the clone differs from the original in a field")
			}
			seen := map[*yaml.Node]bool{}
			var walk func(n *yaml.Node)
			walk = func(n *yaml.Node) {
				seen[n] = true
				for _, ch := range n.Content {
					walk(ch)
				}
			}
			walk(orig)
			var check func(n *yaml.Node)
			check = func(n *yaml.Node) {
				if seen[n] {
					t.Fatalf("the copy shares %q with the original", n.Value)
				}
				if !c.keepPositions && (n.Line != 0 || n.Column != 0) {
					t.Errorf("%q keeps its position", n.Value)
				}
				if c.keepPositions && n.Line == 0 {
					t.Errorf("%q lost its position", n.Value)
				}
				for _, ch := range n.Content {
					check(ch)
				}
			}
			check(cp)
			first := cp.Content[1]
			first.Content = append(first.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "grown"})
			first.Content = first.Content[:len(first.Content)-1]
			if !yamltext.Equal(orig, cp) {
				t.Error("growing a copied list changed the nodes beside it")
			}
			if strings.HasSuffix(c.name, "aliases") && cp.Content[3].Alias != cp.Content[1] {
				t.Error("the alias does not share the copy of its anchor")
			}
		})
	}
}
