package inject_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
)

// TestDNSLabelPattern: the pattern the admission policy matches profile
// names with accepts exactly the names the core accepts.
func TestDNSLabelPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^` + grammar.DNSLabelPattern + `$`)
	for _, s := range []string{
		"", "a", "0", "-", "a-", "-a", "a-b", "a--b", "A", "aB", "a.b", "a_b", "é", "web-1",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "a" + strings.Repeat("-", 61) + "a", "a" + strings.Repeat("-", 62) + "a",
	} {
		if core, pattern := inject.ValidateNamespace(s) == nil, re.MatchString(s); core != pattern {
			t.Errorf("%q: the core says %v, the pattern %v", s, core, pattern)
		}
	}
}
