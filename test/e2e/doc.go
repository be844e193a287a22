// Package e2e runs every example under examples/ with the real tools:
// standalone kustomize (v5.8.0, from hack/install-tools.sh), kpt and
// Docker. The tests build inject-fn and its image themselves, so they do
// not depend on make.
//
// A missing tool skips the tests that need it, with a message; when the
// environment variable CI is "true" it fails them instead, loudly. -short
// skips everything here. -update rewrites the examples' expected output
// (expected.yaml, .expected/diff.patch) from what the tools produce.
//
//	go test ./test/e2e -v
//	CI=true go test ./test/e2e
//	go test ./test/e2e -update
package e2e
