package yamltext

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// copiers are the two copies of a tree the tests compare: Copy drops the
// nodes' positions, Clone keeps them.
var copiers = []struct {
	name      string
	copy      func(*yaml.Node) *yaml.Node
	positions bool
}{{"Copy", Copy, false}, {"Clone", Clone, true}}

// TestCopyWithoutAliases: a tree without aliases (a template's item) is
// copied whole, positions dropped by Copy and kept by Clone, into two
// allocations however many nodes it has. (Not parallel: AllocsPerRun
// counts the allocations of the whole program.)
func TestCopyWithoutAliases(t *testing.T) {
	n := decodeRoot(t, "a:\n  b: [1, 2, 3]\n  c: {d: e}\nf:\n- g\n- h: i\n")
	for _, c := range copiers {
		got := copyEqual(t, c.name, c.copy, n)
		h := got.Content[3].Content[1].Content[0] // the key h
		if h == n.Content[3].Content[1].Content[0] || h.Value != "h" {
			t.Fatalf("%s: the node h is %p %q, want a copy", c.name, h, h.Value)
		}
		if (h.Line == 6 && h.Column == 3) != c.positions || (h.Line == 0) == c.positions {
			t.Errorf("%s: h at %d:%d, want positions kept %v", c.name, h.Line, h.Column, c.positions)
		}
		if allocs := testing.AllocsPerRun(20, func() { c.copy(n) }); allocs != 2 {
			t.Errorf("%s: %v allocations, want 2", c.name, allocs)
		}
	}
}

// TestCopyAliases: an alias in the copy names the copy of its anchor, and
// the anchor is copied once.
func TestCopyAliases(t *testing.T) {
	t.Parallel()
	n := decodeRoot(t, "a: &x\n  b: 1\nc: *x\nd: [*x, *x]\n")
	for _, c := range copiers {
		got := copyEqual(t, c.name, c.copy, n)
		anchor, alias := got.Content[1], got.Content[3]
		if anchor == n.Content[1] || anchor.Content[1].Value != "1" || alias == n.Content[3] {
			t.Fatalf("%s: the anchor and the alias are not copies", c.name)
		}
		if alias.Kind != yaml.AliasNode || alias.Alias != anchor {
			t.Errorf("%s: the alias names %p, want the copy of its anchor %p", c.name, alias.Alias, anchor)
		}
		for i, item := range got.Content[5].Content {
			if item == n.Content[5].Content[i] || item.Alias != anchor {
				t.Errorf("%s: the alias %d of the list does not name the copy of its anchor", c.name, i)
			}
		}
		if (anchor.Line == 1) != c.positions || (alias.Line == 3) != c.positions {
			t.Errorf("%s: positions %d and %d, want kept %v", c.name, anchor.Line, alias.Line, c.positions)
		}
	}
	if Copy(nil) != nil || Clone(nil) != nil {
		t.Errorf("a copy of nil is not nil")
	}
}

// decodeRoot is the root node of src.
func decodeRoot(t *testing.T, src string) *yaml.Node {
	t.Helper()
	doc, err := Decode([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// copyEqual is copy's copy of n, which must equal n.
func copyEqual(t *testing.T, name string, copy func(*yaml.Node) *yaml.Node, n *yaml.Node) *yaml.Node {
	t.Helper()
	got := copy(n)
	if !Equal(got, n) {
		t.Fatalf("%s: the copy differs", name)
	}
	return got
}
