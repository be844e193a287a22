package version

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
)

// Set by the Makefile and hack/dist with -ldflags "-X ...": the version
// hack/version.sh computes (vX.Y.Z on a tag, v0.0.0-dev+COMMIT or
// vX.Y.(Z+1)-dev+COMMIT otherwise) and the short commit.
var (
	Version = ""
	Commit  = ""
)

// Get returns the version and commit of this binary: those set at build
// time, else what the Go toolchain recorded (the module version for
// `go install ...@v0.1.0`, the VCS revision for a build in a checkout),
// else v0.0.0-dev: a build nobody versioned says so, never "dev" alone.
func Get() (version, commit string) {
	version, commit = Version, Commit
	if version == "" || commit == "" {
		v, c := fromBuildInfo()
		if version == "" {
			version = v
		}
		if commit == "" {
			commit = c
		}
	}
	if version == "" {
		version = "v0.0.0-dev"
		if commit != "" {
			version += "+" + commit
		}
	}
	return version, commit
}

// String renders "VERSION (COMMIT)", or VERSION alone when it names the
// commit already (v0.0.0-dev+b6a2c90) or the commit is unknown.
func String() string {
	v, c := Get()
	if c == "" || c == "unknown" || strings.Contains(v, "+"+c) {
		return v
	}
	return v + " (" + c + ")"
}

// fromBuildInfo reads the module version and VCS revision the toolchain
// embedded.
func fromBuildInfo() (version, commit string) {
	info, ok := readBuildInfo()
	if !ok {
		return "", ""
	}
	return fromInfo(info)
}

// readBuildInfo is debug.ReadBuildInfo; tests replace it.
var readBuildInfo = debug.ReadBuildInfo

// fromInfo reads the version and commit of info. A build in a checkout
// that is not on a tag gets a pseudo-version from the toolchain
// (v0.0.0-20261201082424-518802f12af2, v0.1.1-0.20261201082424-518802f12af2
// after the tag v0.1.0, with "+dirty" for a modified tree); it is written
// as hack/version.sh writes it: v0.0.0-dev+518802f, v0.1.1-dev+518802f,
// with ".dirty" after the commit. A tagged build keeps its version (v0.1.0,
// or v0.1.0+dirty, as hack/version.sh has it too).
func fromInfo(info *debug.BuildInfo) (version, commit string) {
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
			if len(commit) > 7 {
				commit = commit[:7]
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && commit != "" {
		commit += ".dirty"
	}
	switch v := info.Main.Version; {
	case v == "" || v == "(devel)":
		// Get says v0.0.0-dev+COMMIT.
	case commit != "" && isPseudo(v):
		version = pseudoBase(v) + "-dev+" + commit
	default:
		version = v
	}
	return version, commit
}

// pseudoVersion matches the three forms of Go's pseudo-versions, with an
// optional "+dirty" (or other build metadata) after them:
//
//	vX.0.0-yyyymmddhhmmss-abcdefabcdef          no tag before the commit
//	vX.Y.(Z+1)-0.yyyymmddhhmmss-abcdefabcdef    after the tag vX.Y.Z
//	vX.Y.Z-pre.0.yyyymmddhhmmss-abcdefabcdef    after the tag vX.Y.Z-pre
//
// The first group is the release the pseudo-version counts from ("vX.0.0",
// "vX.Y.(Z+1)"), empty after a pre-release tag.
//
// Compiled on first use: most runs never read a version.
var pseudoVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(v[0-9]+\.0\.0)-|(v[0-9]+\.[0-9]+\.[0-9]+)-0\.|v[0-9]+\.[0-9]+\.[0-9]+-[^+]*\.0\.)[0-9]{14}-[0-9a-f]{12}(?:\+[0-9A-Za-z.-]+)?$`)
})

func isPseudo(v string) bool { return pseudoVersion().MatchString(v) }

// pseudoBase returns the release a pseudo-version sorts just before, as
// hack/version.sh counts it: vX.0.0 without a tag, vX.Y.(Z+1) after the
// tag vX.Y.Z, and v0.0.0 after a pre-release tag (hack/version.sh counts
// only vX.Y.Z tags).
func pseudoBase(v string) string {
	m := pseudoVersion().FindStringSubmatch(v)
	switch {
	case m[1] != "":
		return m[1]
	case m[2] != "":
		return m[2]
	}
	return "v0.0.0"
}
