// Package nodes holds the small reads and writes over yaml.Node that the
// injection core, its template package and the text engine (pkg/yamltext)
// share: looking up a mapping's
// field, a list's item by name, building new scalars, mappings and
// sequences, and naming a node's kind in messages. It knows nothing of
// Kubernetes beyond the "name" key of list items.
package nodes
