// Package krew tests the release artifacts and the krew manifest:
//
//   - krew.yaml at the top level is what hack/krew.yaml.tmpl renders (not stale)
//     and passes validate-krew-manifest -skip-install;
//   - `go run ./hack/dist` for the host platform (and windows/amd64) writes
//     archives holding the binary and LICENSE, a zip with kubectl-inject.exe on
//     windows, inject-fn binaries, and a checksums.txt that verifies;
//   - the archives are reproducible (a second build gives the same bytes);
//   - the rendered manifest validates, `krew install --manifest --archive`
//     installs it into a temporary KREW_ROOT, and `kubectl inject --version`
//     runs the plugin through kubectl's plugin discovery.
//
// Tools (krew, validate-krew-manifest, kubectl) are looked up on PATH, then in
// ${KINJECT_CACHE:-$HOME/.cache/kubectl-inject}/bin (hack/install-tools.sh).
// A missing tool skips the test, or fails it when CI=true. -short skips the
// tests that build. The first (cold) cross build takes minutes: run with
// -timeout 30m.
//
//	go test -timeout 30m ./test/krew
package krew
