package version

import (
	"runtime/debug"
	"strconv"
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

// TestFromBuildInfo: what the toolchain records for a build in a checkout
// (go build with VCS stamping) reads as hack/version.sh writes versions:
// a pseudo-version becomes vX.Y.Z-dev+COMMIT, with ".dirty" for a
// modified tree.
func TestFromBuildInfo(t *testing.T) {
	const rev = "518802f12af2c0ffee00c0ffee00c0ffee00c0ff"
	cases := []struct {
		name, version  string
		revision       string
		modified       bool
		want, wantHash string
	}{
		{"untagged", "v0.0.0-20261201082424-518802f12af2", rev, false, "v0.0.0-dev+518802f", "518802f"},
		{"untagged and dirty", "v0.0.0-20261201082424-518802f12af2+dirty", rev, true, "v0.0.0-dev+518802f.dirty", "518802f.dirty"},
		{"after a tag", "v0.1.1-0.20261201082424-518802f12af2", rev, false, "v0.1.1-dev+518802f", "518802f"},
		{"after a tag, dirty", "v0.1.1-0.20261201082424-518802f12af2+dirty", rev, true, "v0.1.1-dev+518802f.dirty", "518802f.dirty"},
		{"after a pre-release tag", "v0.2.0-rc.1.0.20261201082424-518802f12af2", rev, false, "v0.0.0-dev+518802f", "518802f"},
		{"no version stamped", "(devel)", rev, false, "v0.0.0-dev+518802f", "518802f"},
		{"no version stamped, dirty", "(devel)", rev, true, "v0.0.0-dev+518802f.dirty", "518802f.dirty"},
		{"tagged", "v0.1.0", rev, false, "v0.1.0 (518802f)", "518802f"},
		{"tagged and dirty", "v0.1.0+dirty", rev, true, "v0.1.0+dirty (518802f.dirty)", "518802f.dirty"},
		{"go install at a commit", "v0.0.0-20261201082424-518802f12af2", "", false, "v0.0.0-20261201082424-518802f12af2", ""},
		{"go install at a tag", "v0.1.0", "", false, "v0.1.0", ""},
		{"nothing recorded", "(devel)", "", false, "v0.0.0-dev", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kinject/kubectl-inject", Version: c.version}}
			if c.revision != "" {
				info.Settings = append(info.Settings,
					debug.BuildSetting{Key: "vcs", Value: "git"},
					debug.BuildSetting{Key: "vcs.revision", Value: c.revision},
					debug.BuildSetting{Key: "vcs.modified", Value: strconv.FormatBool(c.modified)})
			}
			readBuildInfo = func() (*debug.BuildInfo, bool) { return info, true }
			defer func() { readBuildInfo = debug.ReadBuildInfo }()
			if got := String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
			if _, commit := Get(); commit != c.wantHash {
				t.Errorf("commit %q, want %q", commit, c.wantHash)
			}
		})
	}
}
