package inject

import (
	"sort"
	"strings"
	"sync"
)

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
