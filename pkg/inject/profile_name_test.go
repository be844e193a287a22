package inject

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// TestValidateProfile: the default profile is "", a named one a DNS label
// that is not "default".
func TestValidateProfile(t *testing.T) {
	for _, tc := range []struct {
		name, err string
	}{
		{"", ""},
		{"logs", ""},
		{"a-1", ""},
		{"default", `profile "default": the default profile has no name`},
		{"Logs", "not a valid name"},
		{"-logs", "not a valid name"},
		{"a.b", "not a valid name"},
		{strings.Repeat("x", 64), "not a valid name"},
	} {
		err := naming.ValidateProfile(tc.name)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("naming.ValidateProfile(%q) = %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}
