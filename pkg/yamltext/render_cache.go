package yamltext

import (
	"fmt"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderCache keeps the text that inserted items render to, per
// indentation style, for the inserts that name their Origin, for string
// pairs (labels, annotations) and for small created fields. Rendering the
// same items into thousands of documents is otherwise the largest cost
// after parsing.
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
	content string // the node itself, when small (contentKey)
}

// maxContentKey bounds the nodes cached by their content.
const maxContentKey = 1024

// contentKey is everything the text of n depends on (kinds, styles, tags,
// values, comments), as a cache key: for the small nodes an insert
// creates, such as an annotations field with its pairs. ok is false for
// larger nodes and for anchors and aliases.
func contentKey(n *yaml.Node) (string, bool) {
	var b strings.Builder
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		if n == nil || n.Anchor != "" || n.Kind == yaml.AliasNode {
			return false
		}
		fmt.Fprintf(&b, "%d\x00%d\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d\x00", n.Kind, n.Style, n.Tag, n.Value, n.HeadComment, n.LineComment, n.FootComment, len(n.Content))
		if b.Len() > maxContentKey {
			return false
		}
		for _, c := range n.Content {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	if !walk(n) {
		return "", false
	}
	return b.String(), true
}

// renderCached renders n like render, reusing the text for inserts of
// template items, of string pairs such as annotations and of small created
// fields (widened items are cached before widening; the caller widens).
func (td *textDoc) renderCached(e Edit, n *yaml.Node, indent int) (string, error) {
	scalarPair := e.Kind == InsertEdit && e.Parent.Kind == yaml.MappingNode && e.Value.Kind == yaml.ScalarNode
	var content string
	if e.Origin == nil && !scalarPair {
		var ok bool
		if content, ok = contentKey(n); !ok {
			return td.render(n, indent)
		}
	}
	if td.renders == nil {
		return td.render(n, indent)
	}
	td.detectStyle()
	k := renderKey{origin: e.Origin, n: e.OriginN, key: e.Key, indent: indent, step: td.indentStep, wide: td.wideSeq, crlf: td.eol != "\n", mapping: n.Kind == yaml.MappingNode}
	switch {
	case scalarPair:
		k.scalar = e.Value.Value
	case content != "":
		k.content = content
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
