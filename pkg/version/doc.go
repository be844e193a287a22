// Package version holds the version and commit of both binaries, set at
// build time with -ldflags -X.
package version
