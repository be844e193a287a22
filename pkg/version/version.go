// Package version holds the version and commit of both binaries, set at
// build time with -ldflags -X.
package version

// Set by the Makefile with -ldflags "-X ...".
var (
	Version = "dev"
	Commit  = "unknown"
)

// String renders "VERSION (COMMIT)".
func String() string { return Version + " (" + Commit + ")" }
