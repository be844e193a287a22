// Package nodes holds the small reads and writes over yaml.Node that the
// injection core and its template package share: looking up a mapping's
// field, a list's item by name, building new scalars, mappings and
// sequences, and naming a node's kind in messages. It knows nothing of
// Kubernetes beyond the "name" key of list items.
package nodes
