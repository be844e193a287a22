package grammar

import (
	"math/big"
	"regexp"
	"strings"
	"sync"
)

// quantitySuffixes are the resource quantity grammar's suffixes (binary
// SI, then decimal SI) and their multipliers, as powers: base^exp. Both
// grammars below list them from here.
var quantitySuffixes = []struct {
	name      string
	base, exp int64
}{
	{"Ki", 2, 10}, {"Mi", 2, 20}, {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
	{"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
	{"k", 10, 3}, {"M", 10, 6}, {"G", 10, 9}, {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18},
}

// QuantitySuffixPattern is the suffixes as RE2 alternatives: Ki|Mi|...
var QuantitySuffixPattern = func() string {
	names := make([]string, len(quantitySuffixes))
	for i, s := range quantitySuffixes {
		names[i] = s.name
	}
	return strings.Join(names, "|")
}()

// quantityText is the Kubernetes resource quantity grammar as the API
// server parses it: a signed decimal number and a suffix (binary SI,
// decimal SI, or a decimal exponent). An override's value is held to a
// stricter form of it (TypeQuantity's pattern). Compiled on first use,
// not at every start.
var quantityText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(` + QuantitySuffixPattern + `|[eE][+-]?[0-9]+)?$`)
})

// quantitySuffix returns the multiplier of a suffix, "" included (1).
func quantitySuffix(name string) (base, exp int64, ok bool) {
	if name == "" {
		return 10, 0, true
	}
	for _, s := range quantitySuffixes {
		if s.name == name {
			return s.base, s.exp, true
		}
	}
	return 0, 0, false
}

// QuantityValue is the exact value of a resource quantity ("1000m" and
// "1" are both 1), and false for text that is not one. The core compares
// quantities by value as the API server stores them (canonical) and the
// admission policy compares them (CEL's quantity library), without
// linking the API machinery into the core.
func QuantityValue(s string) (*big.Rat, bool) {
	m := quantityText().FindStringSubmatch(s)
	if m == nil {
		return nil, false
	}
	v, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return nil, false
	}
	base, exp, known := quantitySuffix(m[2])
	if !known { // a decimal exponent: e3, E-2
		e, ok := new(big.Int).SetString(m[2][1:], 10)
		if !ok || !e.IsInt64() || e.Int64() < -100 || e.Int64() > 100 {
			return nil, false
		}
		base, exp = 10, e.Int64()
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(base), big.NewInt(abs(exp)), nil))
	if exp < 0 {
		return v.Quo(v, scale), true
	}
	return v.Mul(v, scale), true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// SameQuantity reports whether two resource quantities are equal.
func SameQuantity(a, b string) bool {
	x, ok1 := QuantityValue(a)
	y, ok2 := QuantityValue(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}
