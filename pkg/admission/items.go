package admission

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// item is one container, init container or volume of the template, with
// the CEL that finds it in a Pod.
type item struct {
	list  string // "containers", "initContainers" or "volumes"
	name  string
	value any    // the item as decoded data
	flag  string // the variable telling whether the Pod lacks it: variables.add_c0
	cel   string // the item as a CEL literal
}

// newItems decodes the template's nodes of one list.
func newItems(list, prefix string, nodes []*yaml.Node) ([]item, error) {
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
		lit, err := celValue(m)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", list, i, err)
		}
		name, _ := m["name"].(string)
		out = append(out, item{list: list, name: name, value: m, flag: fmt.Sprintf("%s%d", prefix, i), cel: lit})
	}
	return out, nil
}

// podLists are the Pod lists an item of the template may already be in:
// containers and init containers share one name space.
func (it item) podLists() []string {
	if it.list == "volumes" {
		return []string{"volumes"}
	}
	return []string{"containers", "initContainers"}
}

// what names the item kind in messages, as the core does.
func (it item) what() string {
	if it.list == "volumes" {
		return "volume"
	}
	return "container"
}

// presentExpr is true when the Pod has an item of this name at all.
func (it item) presentExpr() string {
	var parts []string
	for _, l := range it.podLists() {
		parts = append(parts, fmt.Sprintf(`(has(object.spec.%s) && object.spec.%s.exists(x, x.name == %s))`, l, l, celString(it.name)))
	}
	return strings.Join(parts, " || ")
}

// identicalExpr is true when the Pod has an item of this name that holds
// the template's item. The API server has defaulted the Pod before
// admission (imagePullPolicy, terminationMessagePath, a port's protocol,
// a ConfigMap volume's defaultMode) and canonicalized its quantities
// ("1000m" is stored as "1"), so identical means: every field the template
// sets has the template's value, quantities compared as quantities.
func (it item) identicalExpr() string {
	var parts []string
	for _, l := range it.podLists() {
		parts = append(parts, fmt.Sprintf(`(has(object.spec.%s) && object.spec.%s.exists(x, x.name == %s && %s))`, l, l, celString(it.name), subsetExpr("x", it.value, nil)))
	}
	return strings.Join(parts, " || ")
}

// quantityMaps are the fields of containers and volumes whose values are
// resource quantities.
var quantityMaps = map[string]bool{
	"resources.limits": true, "resources.requests": true, "emptyDir.sizeLimit": true,
}

// subsetExpr is a CEL predicate that holds when the value of expr contains
// v: every field of a mapping, every item of a list (same length), equal
// scalars. path is the field path from the item, for quantities.
func subsetExpr(expr string, v any, path []string) string {
	switch x := v.(type) {
	case hole:
		return x.subsetExpr(expr, path)
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(x) {
			child := append(append([]string(nil), path...), k)
			sub := expr + "." + k
			has := "has(" + sub + ")"
			if !celIdent(k) || quantityMaps[strings.Join(path, ".")] {
				sub = expr + "[" + celString(k) + "]"
				has = celString(k) + " in " + expr
			}
			parts = append(parts, "("+has+" && "+subsetExpr(sub, x[k], child)+")")
		}
		if len(parts) == 0 {
			return "true"
		}
		return strings.Join(parts, " && ")
	case []any:
		parts := []string{fmt.Sprintf("size(%s) == %d", expr, len(x))}
		for i, e := range x {
			parts = append(parts, subsetExpr(fmt.Sprintf("%s[%d]", expr, i), e, path))
		}
		return strings.Join(parts, " && ")
	case string:
		if isQuantityPath(path) {
			return quantityExpr(expr, x)
		}
		return expr + " == " + celString(x)
	case int, int64, float64:
		if isQuantityPath(path) {
			return quantityExpr(expr, fmt.Sprint(x))
		}
		lit, _ := celValue(x)
		return expr + " == " + lit
	default:
		lit, err := celValue(x)
		if err != nil {
			return "false"
		}
		return expr + " == " + lit
	}
}

// isQuantityPath reports whether the field at path holds a quantity: a key
// of resources.limits, say.
func isQuantityPath(path []string) bool {
	return len(path) > 0 && (quantityMaps[strings.Join(path[:len(path)-1], ".")] || quantityMaps[strings.Join(path, ".")])
}

// quantityExpr compares the quantity at expr with want as quantities, and
// as strings when either is not a quantity.
func quantityExpr(expr, want string) string {
	return quantityExprOf(expr, celString(want))
}

// quantityExprOf is quantityExpr with the wanted quantity as a CEL string
// expression w.
func quantityExprOf(expr, w string) string {
	return fmt.Sprintf(`(string(%s) == %s || (isQuantity(string(%s)) && isQuantity(%s) && quantity(string(%s)).compareTo(quantity(%s)) == 0))`, expr, w, expr, w, expr, w)
}
