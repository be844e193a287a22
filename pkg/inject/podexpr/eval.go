package podexpr

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The evaluator of the subset (parse.go). It computes a value
// only where it is sure to give what cel-go gives; everywhere else (an
// error of any kind, an operand of a type it does not compare, a float or
// an alias in the document, a run long enough to approach the cost limit)
// it gives up with errUnsure, and cel-go evaluates the same expression
// over the same Pod. Errors therefore always come from cel-go, with its
// wording, and so do the results of CEL's error absorption (an error ||
// true is true).
//
// Values: nil (null), bool, int64, string, float64 and uint64 (as the
// document holds them, never compared), subsetMap and subsetList.

// errUnsure is the evaluator giving up: cel-go decides.
var errUnsure = errors.New("left to cel-go")

// subsetStepLimit bounds one evaluation, far below celgo.CostLimit
// even counting a string comparison as its length: a run that might come
// near the limit is left to cel-go, which enforces it.
const subsetStepLimit = 10_000

// subsetMap is a map the evaluator reads without converting it.
type subsetMap interface {
	// get returns the value at key; ok is false when it is absent.
	get(key string) (v any, ok bool, err error)
	size() (int, error)
}

// subsetList is a list the evaluator reads without converting it.
type subsetList interface {
	len() int
	at(i int) (any, error)
}

// sliceList is a list the evaluator made (a literal, a filter or a map).
type sliceList []any

func (l sliceList) len() int              { return len(l) }
func (l sliceList) at(i int) (any, error) { return l[i], nil }

// subsetEval is one evaluation: the variables in scope and the steps
// taken.
type subsetEval struct {
	vars  map[string]any
	steps int
}

// evalSubset evaluates n with object bound to the Pod.
func evalSubset(n *subsetNode, object subsetMap) (any, error) {
	e := &subsetEval{vars: map[string]any{"object": object}}
	return e.eval(n)
}

func (e *subsetEval) step(n int) error {
	e.steps += n
	if e.steps > subsetStepLimit {
		return errUnsure
	}
	return nil
}

func (e *subsetEval) eval(n *subsetNode) (any, error) {
	if err := e.step(1); err != nil {
		return nil, err
	}
	switch n.op {
	case opLiteral:
		return n.lit, nil
	case opIdent:
		return e.vars[n.name], nil
	case opSelect, opHas:
		return e.field(n)
	case opIndex:
		return e.index(n)
	case opCall:
		return e.call(n)
	case opMacro:
		return e.macro(n)
	case opNot:
		b, err := e.bool(n.args[0])
		return !b, err
	case opAnd, opOr:
		// Left to right with short-circuit: an error on the left is
		// left to cel-go, whose && and || absorb it.
		b, err := e.bool(n.args[0])
		if err != nil || b == (n.op == opOr) {
			return b, err
		}
		return e.bool(n.args[1])
	case opCond:
		b, err := e.bool(n.args[0])
		if err != nil {
			return nil, err
		}
		if b {
			return e.eval(n.args[1])
		}
		return e.eval(n.args[2])
	case opCompare:
		return e.compare(n)
	case opList:
		out := make(sliceList, len(n.args))
		for i, a := range n.args {
			v, err := e.eval(a)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, errUnsure
}

// bool evaluates n, which must give a bool.
func (e *subsetEval) bool(n *subsetNode) (bool, error) {
	v, err := e.eval(n)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errUnsure
	}
	return b, nil
}

// field is x.f and has(x.f) on a map.
func (e *subsetEval) field(n *subsetNode) (any, error) {
	x, err := e.eval(n.args[0])
	if err != nil {
		return nil, err
	}
	m, ok := x.(subsetMap)
	if !ok {
		return nil, errUnsure
	}
	v, found, err := m.get(n.name)
	switch {
	case err != nil:
		return nil, err
	case n.op == opHas:
		return found, nil
	case !found:
		return nil, errUnsure // no such key
	}
	return v, nil
}

// index is x[i] on a list (an int in range) or a map (a string key that
// is present).
func (e *subsetEval) index(n *subsetNode) (any, error) {
	x, err := e.eval(n.args[0])
	if err != nil {
		return nil, err
	}
	i, err := e.eval(n.args[1])
	if err != nil {
		return nil, err
	}
	switch x := x.(type) {
	case subsetList:
		if i, ok := i.(int64); ok && i >= 0 && i < int64(x.len()) {
			return x.at(int(i))
		}
	case subsetMap:
		if k, ok := i.(string); ok {
			v, found, err := x.get(k)
			if err == nil && !found {
				err = errUnsure
			}
			return v, err
		}
	}
	return nil, errUnsure
}

// call runs the functions of the subset.
func (e *subsetEval) call(n *subsetNode) (any, error) {
	args := make([]any, len(n.args))
	for i, a := range n.args {
		v, err := e.eval(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	switch n.name {
	case "dyn":
		return args[0], nil
	case "size":
		switch x := args[0].(type) {
		case string:
			return int64(utf8.RuneCountInString(x)), nil
		case subsetList:
			return int64(x.len()), nil
		case subsetMap:
			size, err := x.size()
			return int64(size), err
		}
		return nil, errUnsure
	}
	s, ok1 := args[0].(string)
	t, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return nil, errUnsure
	}
	if err := e.step(len(s) / 10); err != nil {
		return nil, err
	}
	switch n.name {
	case "startsWith":
		return strings.HasPrefix(s, t), nil
	case "endsWith":
		return strings.HasSuffix(s, t), nil
	case "contains":
		return strings.Contains(s, t), nil
	}
	return nil, errUnsure
}

// macro runs a comprehension over a list. Any error in an iteration is
// left to cel-go, which absorbs some of them (exists, all).
func (e *subsetEval) macro(n *subsetNode) (any, error) {
	x, err := e.eval(n.args[0])
	if err != nil {
		return nil, err
	}
	list, ok := x.(subsetList)
	if !ok {
		return nil, errUnsure // a map iterates its keys: cel-go does
	}
	saved, had := e.vars[n.iter]
	defer func() {
		if had {
			e.vars[n.iter] = saved
		} else {
			delete(e.vars, n.iter)
		}
	}()
	var out sliceList
	count := 0
	for i := 0; i < list.len(); i++ {
		item, err := list.at(i)
		if err != nil {
			return nil, err
		}
		e.vars[n.iter] = item
		if n.name == "map" {
			v, err := e.eval(n.args[1])
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		b, err := e.bool(n.args[1])
		if err != nil {
			return nil, err
		}
		switch {
		case n.name == "exists" && b:
			return true, nil
		case n.name == "all" && !b:
			return false, nil
		case n.name == "filter" && b:
			out = append(out, item)
		case b:
			count++
		}
	}
	switch n.name {
	case "exists":
		return false, nil
	case "all":
		return true, nil
	case "exists_one":
		return count == 1, nil
	}
	if out == nil {
		out = sliceList{}
	}
	return out, nil
}

// compare runs == != < <= > >= and in.
func (e *subsetEval) compare(n *subsetNode) (any, error) {
	a, err := e.eval(n.args[0])
	if err != nil {
		return nil, err
	}
	b, err := e.eval(n.args[1])
	if err != nil {
		return nil, err
	}
	if n.name == "in" {
		return e.in(a, b)
	}
	c, err := e.order(a, b, n.name == "==" || n.name == "!=")
	if err != nil {
		return nil, err
	}
	switch n.name {
	case "==":
		return c == 0, nil
	case "!=":
		return c != 0, nil
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	}
	return c >= 0, nil
}

// order compares two values of the same type: ints and strings, and for
// equality also bools and nulls. Anything else (across types, where CEL's
// numeric comparisons and heterogeneous equality apply) is left to
// cel-go.
func (e *subsetEval) order(a, b any, equality bool) (int, error) {
	switch a := a.(type) {
	case int64:
		if b, ok := b.(int64); ok {
			return cmpOrdered(a, b), nil
		}
	case string:
		if b, ok := b.(string); ok {
			if err := e.step(min(len(a), len(b)) / 10); err != nil {
				return 0, err
			}
			return strings.Compare(a, b), nil
		}
	case bool:
		if b, ok := b.(bool); ok && equality {
			if a == b {
				return 0, nil
			}
			return 1, nil
		}
	case nil:
		if b == nil && equality {
			return 0, nil
		}
	}
	return 0, errUnsure
}

func cmpOrdered[T int64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// in is a in b: a key of a map, or an item of a list of comparable values.
func (e *subsetEval) in(a, b any) (any, error) {
	switch b := b.(type) {
	case subsetMap:
		k, ok := a.(string)
		if !ok {
			return nil, errUnsure
		}
		_, found, err := b.get(k)
		return found, err
	case subsetList:
		for i := 0; i < b.len(); i++ {
			item, err := b.at(i)
			if err != nil {
				return nil, err
			}
			if err := e.step(1); err != nil {
				return nil, err
			}
			c, err := e.order(a, item, true)
			if err != nil {
				return nil, err
			}
			if c == 0 {
				return true, nil
			}
		}
		return false, nil
	}
	return nil, errUnsure
}
