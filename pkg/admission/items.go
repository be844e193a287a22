package admission

import (
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// item is one container, init container or volume of the template.
type item struct {
	list  string // "containers", "initContainers" or "volumes"
	name  string
	value any       // the item as decoded data, with holes for parameters
	lit   expr.Expr // the item as a CEL literal
	// missing is the variable telling whether the Pod lacks an item of
	// that name (then it is added): envoyMissing.
	missing expr.Expr
}

// newItems decodes the template's nodes of one list.
func newItems(list string, nodes []*yaml.Node) ([]item, error) {
	out := make([]item, 0, len(nodes))
	for i, n := range nodes {
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", list, i, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: must be a mapping", list, i)
		}
		name, _ := m["name"].(string)
		out = append(out, item{list: list, name: name, value: m})
	}
	return out, nil
}

// isVolume tells volumes from containers and init containers, which share
// one name space.
func (it item) isVolume() bool { return it.list == "volumes" }

// kind is the item's kind of conflict: how messages name it, and the
// record lists that name the items other profiles added.
func (it item) kind() inject.ConflictKind { return inject.ItemConflictKind(it.list) }

// varName is the stem of the item's variables: envoy, envoyConfVolume.
func (it item) varName() string {
	if it.isVolume() {
		return camel(it.name) + "Volume"
	}
	return camel(it.name)
}

// podItems is the variable listing the Pod's items of the item's name
// space: allContainers or podVolumes.
func (it item) podItems() expr.Expr {
	if it.isVolume() {
		return expr.Var("podVolumes")
	}
	return expr.Var("allContainers")
}

// identicalExpr is true when the Pod has an item of this name that holds
// the template's item. The API server has defaulted the Pod before
// admission (imagePullPolicy, terminationMessagePath, a port's protocol,
// a ConfigMap volume's defaultMode) and canonicalized its quantities
// ("1000m" is stored as "1"), so identical means: every field the template
// sets has the template's value, quantities compared as quantities.
//
// Where the template's value depends on the Pod (an override, a computed
// value), it is read from the item's variable, it.lit (envoyContainer),
// the value the policy would add: written once, compared as added.
func (it item) identicalExpr() expr.Expr {
	x := expr.Ident("x")
	var s subset
	// The name is compared first, once.
	fields := map[string]any{}
	for k, v := range it.value.(map[string]any) {
		if k != "name" {
			fields[k] = v
		}
	}
	same := s.at(x, it.lit, fields, nil)
	return expr.Method(it.podItems(), "exists", x, expr.And(expr.Eq(expr.Field(x, "name"), expr.Str(it.name)), same, s.quantitiesEqual()))
}

// subset builds the predicate that an item of the Pod holds the
// template's. Quantities are not compared where they are met: they are
// gathered, and compared together by quantitiesEqual, so that the
// comparison of two quantities is written once.
type subset struct {
	// quantities are the pairs [the Pod's text, the template's text].
	quantities []expr.Expr
}

// at is a CEL predicate that holds when the value of e contains v: every
// field of a mapping, every item of a list (same length), equal scalars;
// quantities are gathered for quantitiesEqual. path is the field path
// from the item, for quantities; added is the place of v in the item as
// the policy adds it (envoyContainer), read where the template's value
// depends on the Pod. Fields are read with optional selection (e.?f), so
// that a field and the path to it are checked in one comparison:
// x.?lifecycle.?preStop.?sleep.?seconds == optional.of(5) holds when
// each is set and the last is 5.
func (s *subset) at(e, added expr.Expr, v any, path []string) expr.Expr {
	opt := func(x expr.Expr) expr.Expr { return expr.Eq(e, expr.Call("optional.of", x)) }
	// The quantity's text, "" when unset (never equal to a quantity),
	// paired with the template's.
	quantity := func(want expr.Expr) expr.Expr {
		s.quantities = append(s.quantities, expr.List(expr.Call("string", expr.Method(e, "orValue", expr.Str(""))), want))
		return expr.True
	}
	switch x := v.(type) {
	case hole:
		// An annotation's value is typed dyn: string() where the
		// template's field is a string.
		val := added
		if x.isString() || inject.IsQuantityField(path) {
			val = expr.Call("string", added)
		}
		if inject.IsQuantityField(path) {
			return quantity(val)
		}
		return opt(val)
	case map[string]any:
		var parts []expr.Expr
		for _, k := range slices.Sorted(maps.Keys(x)) {
			child := append(append([]string(nil), path...), k)
			sub := expr.OptField(e, k)
			if inject.IsQuantityFieldName(path) || !expr.IsIdent(k) {
				sub = expr.OptIndex(e, expr.Str(k))
			}
			if m, ok := x[k].(map[string]any); ok && len(m) == 0 {
				// An empty mapping (emptyDir: {}) is set, whatever it holds.
				parts = append(parts, expr.Method(sub, "hasValue"))
				continue
			}
			parts = append(parts, s.at(sub, expr.Field(added, k), x[k], child))
		}
		return expr.And(parts...)
	case []any:
		if words, holes := wordList(x); words {
			// A list of words (args, command) is compared whole, as
			// added when a word depends on the Pod.
			if holes {
				return opt(added)
			}
			lit, err := literal(x)
			if err != nil {
				return expr.False
			}
			return opt(lit)
		}
		// The list is set: its items are read as themselves.
		items := expr.Method(e, "value")
		parts := []expr.Expr{expr.Eq(expr.Call("size", expr.Method(e, "orValue", expr.List())), expr.Int(int64(len(x))))}
		for i, item := range x {
			parts = append(parts, s.at(expr.Index(items, expr.Int(int64(i))), expr.Index(added, expr.Int(int64(i))), item, path))
		}
		return expr.And(parts...)
	case string:
		if inject.IsQuantityField(path) {
			return quantity(expr.Str(x))
		}
		return opt(expr.Str(x))
	case int, int64, float64:
		if inject.IsQuantityField(path) {
			return quantity(expr.Str(fmt.Sprint(x)))
		}
	}
	lit, err := literal(v)
	if err != nil {
		return expr.False
	}
	return opt(lit)
}

// wordList reports whether every item of x is a string or the hole of a
// string (a flag's value), as in args and command, and whether one is a
// hole.
func wordList(x []any) (words, holes bool) {
	for _, v := range x {
		switch w := v.(type) {
		case string:
		case hole:
			if !w.isString() {
				return false, false
			}
			holes = true
		default:
			return false, false
		}
	}
	return len(x) > 0, holes
}

// quantitiesEqual holds when each gathered pair is equal as quantities,
// or as strings when either is not a quantity: one table and one
// comparison, [[got, want], ...].all(q, ...).
func (s *subset) quantitiesEqual() expr.Expr {
	if len(s.quantities) == 0 {
		return expr.True
	}
	q := expr.Ident("q")
	got, want := expr.Index(q, expr.Int(0)), expr.Index(q, expr.Int(1))
	return expr.Method(expr.List(s.quantities...), "all", q, expr.Or(
		expr.Eq(got, want),
		expr.And(expr.Call("isQuantity", got), expr.Call("isQuantity", want),
			expr.Eq(expr.Method(expr.Call("quantity", got), "compareTo", expr.Call("quantity", want)), expr.Int(0)))))
}
