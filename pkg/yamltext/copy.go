package yamltext

import "sigs.k8s.io/kustomize/kyaml/yaml"

// Copy copies a node tree. Positions are dropped: a copy is new
// content. Each node is copied once, so an alias shares the copy of its
// anchor as it shared the original: an alias bomb costs linear time.
func Copy(n *yaml.Node) *yaml.Node { return copyTree(n, false) }

// Clone copies a node tree with every field, positions included: the
// copy reads as the original did when it was parsed (the default template
// compiled into the program, read again at each use).
func Clone(n *yaml.Node) *yaml.Node { return copyTree(n, true) }

func copyTree(n *yaml.Node, keepPositions bool) *yaml.Node {
	if n == nil {
		return nil
	}
	nodes, children, alias := treeSize(n)
	if alias {
		return copyShared(n, map[*yaml.Node]*yaml.Node{}, keepPositions)
	}
	// A tree without aliases (a template's item, every time it is
	// injected) is copied into two allocations instead of one per node.
	c := treeCopy{nodes: make([]yaml.Node, 0, nodes), content: make([]*yaml.Node, 0, children), keepPositions: keepPositions}
	return c.copy(n)
}

// treeSize counts the nodes of the tree at n and their children, and
// reports whether it holds an alias.
func treeSize(n *yaml.Node) (nodes, children int, alias bool) {
	nodes, children = 1, len(n.Content)
	if n.Kind == yaml.AliasNode || n.Alias != nil {
		return nodes, children, true
	}
	for _, child := range n.Content {
		if child == nil {
			continue
		}
		cn, cc, ca := treeSize(child)
		nodes, children = nodes+cn, children+cc
		if ca {
			return nodes, children, true
		}
	}
	return nodes, children, false
}

// treeCopy copies a tree without aliases into preallocated storage.
type treeCopy struct {
	nodes         []yaml.Node
	content       []*yaml.Node
	keepPositions bool
}

func (t *treeCopy) copy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	t.nodes = append(t.nodes, *n)
	c := &t.nodes[len(t.nodes)-1]
	if !t.keepPositions {
		c.Line, c.Column = 0, 0
	}
	if n.Content != nil {
		start := len(t.content)
		t.content = append(t.content, n.Content...)
		c.Content = t.content[start:len(t.content):len(t.content)]
		for i, child := range n.Content {
			c.Content[i] = t.copy(child)
		}
	}
	return c
}

func copyShared(n *yaml.Node, copied map[*yaml.Node]*yaml.Node, keepPositions bool) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := copied[n]; ok {
		return c
	}
	c := *n
	copied[n] = &c
	if !keepPositions {
		c.Line, c.Column = 0, 0
	}
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = copyShared(child, copied, keepPositions)
		}
	}
	if n.Alias != nil {
		c.Alias = copyShared(n.Alias, copied, keepPositions)
	}
	return &c
}
