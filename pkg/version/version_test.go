package version

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct {
		name, version, commit, want string
	}{
		{"tagged", "v0.1.0", "b6a2c90", "v0.1.0 (b6a2c90)"},
		{"untagged", "v0.0.0-dev+b6a2c90", "b6a2c90", "v0.0.0-dev+b6a2c90"},
		{"untagged and dirty", "v0.0.0-dev+b6a2c90.dirty", "b6a2c90", "v0.0.0-dev+b6a2c90.dirty"},
		{"after a tag", "v0.1.1-dev+b6a2c90", "b6a2c90", "v0.1.1-dev+b6a2c90"},
		{"no commit", "v0.1.0", "unknown", "v0.1.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			Version, Commit = c.version, c.commit
			defer func() { Version, Commit = "", "" }()
			if got := String(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestUnversioned: a test binary has no version set; it still gets a
// semantic version that says it is a development build.
func TestUnversioned(t *testing.T) {
	v, _ := Get()
	if v != "v0.0.0-dev" && !strings.HasPrefix(v, "v0.0.0-dev+") {
		t.Errorf("unversioned build: %q", v)
	}
}
