package grammar

import (
	"math/big"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestQuantityValue: the core's quantity comparison is the Kubernetes
// parser's (which the API server and CEL's quantity library use), on
// every pair of a sample that covers each suffix, signs, exponents and
// non-quantities.
func TestQuantityValue(t *testing.T) {
	samples := []string{
		"1", "1000m", "1.0", "+1", "1e0", "1E0", "0.001k", "1000000u", "1000000000n", ".5", "500m", "5e-1",
		"1Gi", "1024Mi", "1048576Ki", "1073741824", "1.5Gi", "1536Mi", "2k", "2000", "3M", "3e6", "1E", "1e18",
		"0", "0m", "0Ki", "-1", "-1000m", "100m", "0.1", "1e-2", "10m", "1m5", "lots", "", "1 Gi", "1gi", "e3", "5.", "5",
	}
	pairs := 0
	for _, a := range samples {
		for _, b := range samples {
			qa, errA := resource.ParseQuantity(a)
			qb, errB := resource.ParseQuantity(b)
			want := errA == nil && errB == nil && qa.Cmp(qb) == 0
			if a == "e3" || b == "e3" {
				continue // Kubernetes reads "e3" as zero; the core asks for the number (the API server stores "0")
			}
			if got := SameQuantity(a, b); got != want {
				t.Errorf("SameQuantity(%q, %q) = %v, the Kubernetes parser says %v", a, b, got, want)
			}
			if want {
				pairs++
			}
		}
	}
	if pairs < 60 {
		t.Fatalf("only %d equal pairs: the sample compares little", pairs)
	}
}

// FuzzSameQuantityAsKubernetes: for any two texts, SameQuantity (the
// core's comparison, kept so that the core links no API machinery) says
// what the Kubernetes parser says, but where listed:
//   - a text without digits before its suffix or exponent ("e3", "+",
//     "Ki"), which Kubernetes reads as zero and the core refuses (the API
//     server stores "0");
//   - a decimal exponent past 100 either way ("0E1000"), which the core
//     refuses to bound the work of one comparison;
//   - a value Kubernetes rounds: it keeps nine decimal places (1n) and
//     rounds up past them, where the core compares exact values.
func FuzzSameQuantityAsKubernetes(f *testing.F) {
	for _, s := range [][2]string{{"1", "1000m"}, {"1Gi", "1024Mi"}, {"5e-1", ".5"}, {"1E", "1e18"}, {"-1", "-1000m"}, {"1 Gi", "1Gi"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if pastExponentBound(a) || pastExponentBound(b) {
			// Not given to Kubernetes: its parser runs for minutes on
			// "1e7777700010".
			if SameQuantity(a, b) {
				t.Errorf("SameQuantity(%q, %q): a value past the exponent bound compared", a, b)
			}
			return
		}
		qa, errA := resource.ParseQuantity(a)
		qb, errB := resource.ParseQuantity(b)
		if errA == nil && errB == nil && (!exactInKubernetes(a, qa) || !exactInKubernetes(b, qb)) {
			return
		}
		want := errA == nil && errB == nil && qa.Cmp(qb) == 0
		if got := SameQuantity(a, b); got != want {
			t.Errorf("SameQuantity(%q, %q) = %v, the Kubernetes parser says %v", a, b, got, want)
		}
	})
}

// exactInKubernetes: the Kubernetes quantity q parsed from s holds the
// value the text says (the core's QuantityValue), not a rounded one, and s
// has digits before its exponent.
func exactInKubernetes(s string, q resource.Quantity) bool {
	v, ok := QuantityValue(s)
	if !ok {
		// compared: the core refuses what Kubernetes reads, but a
		// number without digits
		number := s[:len(s)-len(strings.TrimLeft(s, "+-.0123456789"))]
		return strings.ContainsAny(number, "0123456789")
	}
	k, ok := new(big.Rat).SetString(q.AsDec().String())
	return ok && k.Cmp(v) == 0
}

// pastExponentBound: s is a number with a decimal exponent past 100 either
// way, which the core refuses.
func pastExponentBound(s string) bool {
	number := s[:len(s)-len(strings.TrimLeft(s, "+-.0123456789"))]
	rest := s[len(number):]
	if len(rest) < 2 || (rest[0] != 'e' && rest[0] != 'E') || !strings.ContainsAny(number, "0123456789") {
		return false
	}
	digits := strings.TrimLeft(rest[1:], "+-")
	if len(rest[1:])-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 3 {
		return true
	}
	e, _ := strconv.Atoi("0" + digits)
	return e > 100
}
