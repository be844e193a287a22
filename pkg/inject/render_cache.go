package inject

import (
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// renderCache keeps the text template items render to, per indentation
// style. Rendering the same sidecar into thousands of documents is
// otherwise the largest cost after parsing.
type renderCache struct{ m sync.Map }

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
func (td *textDoc) renderCached(e edit, n *yaml.Node, indent int) (string, error) {
	scalarPair := e.kind == insertEdit && e.parent.Kind == yaml.MappingNode && e.value.Kind == yaml.ScalarNode
	if (e.origin == nil && !scalarPair) || td.renders == nil {
		return td.render(n, indent)
	}
	td.detectStyle()
	k := renderKey{origin: e.origin, n: e.originN, key: e.key, indent: indent, step: td.indentStep, wide: td.wideSeq, crlf: td.eol != "\n", mapping: n.Kind == yaml.MappingNode}
	if scalarPair {
		k.scalar = e.value.Value
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

// derivedCache keeps the templates made for sets of override values, so
// that workloads asking for the same values share the template's nodes and
// with them the render cache. It stops growing at maxDerived sets.
type derivedCache struct {
	mu sync.Mutex
	m  map[string]*Template
}

const maxDerived = 256

// templateFor returns the template with the override values set.
func (in *Injector) templateFor(values map[string]string) *Template {
	if len(values) == 0 {
		return in.template
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\x00" + values[k] + "\x00")
	}
	key := b.String()
	c := in.derived
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.m[key]; ok {
		return t
	}
	t := in.template.withValues(values)
	if c.m == nil {
		c.m = map[string]*Template{}
	}
	if len(c.m) < maxDerived {
		c.m[key] = t
	}
	return t
}
