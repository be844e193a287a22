package yamltext

import (
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderCache keeps the text that inserted items render to, per
// indentation style, for the inserts that name their Origin and for
// string pairs (labels, annotations). Rendering the same items into
// thousands of documents is otherwise the largest cost after parsing.
// The zero value is ready to use, by several goroutines at once.
type RenderCache struct{ m sync.Map }

type renderKey struct {
	origin  *yaml.Node
	n       int
	key     string
	indent  int
	step    int
	wide    bool
	crlf    bool
	extra   int
	mapping bool
	scalar  string // a key: value pair of strings (annotations, labels)
}

// renderCached renders n like render, reusing the text for inserts of
// template items and of string pairs such as annotations (widened items are
// cached before widening; the caller widens).
func (td *textDoc) renderCached(e Edit, n *yaml.Node, indent int) (string, error) {
	scalarPair := e.Kind == InsertEdit && e.Parent.Kind == yaml.MappingNode && e.Value.Kind == yaml.ScalarNode
	if (e.Origin == nil && !scalarPair) || td.renders == nil {
		return td.render(n, indent)
	}
	td.detectStyle()
	k := renderKey{origin: e.Origin, n: e.OriginN, key: e.Key, indent: indent, step: td.indentStep, wide: td.wideSeq, crlf: td.eol != "\n", mapping: n.Kind == yaml.MappingNode}
	if scalarPair {
		k.scalar = e.Value.Value
	}
	if v, ok := td.renders.m.Load(k); ok {
		return v.(string), nil
	}
	text, err := td.render(n, indent)
	if err == nil {
		td.renders.m.Store(k, text)
	}
	return text, err
}
