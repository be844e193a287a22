// Package version holds the version and commit of the binaries
// (kubectl-inject, kinject-live, inject-fn), set at build time with
// -ldflags -X by the Makefile and hack/dist from hack/version.sh, or read
// from the Go toolchain's build information for `go install` and a plain
// `go build` in a checkout (whose pseudo-version is written the way
// hack/version.sh writes versions).
//
// Versions are semantic, as krew requires: a tagged build is vX.Y.Z, an
// untagged one says so, v0.0.0-dev+b6a2c90 (or v0.1.1-dev+b6a2c90 after
// the tag v0.1.0), with ".dirty" when the working tree had uncommitted
// changes.
package version
