package version

import (
	"runtime/debug"
	"strings"
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
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		version = v
	}
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
	return version, commit
}
