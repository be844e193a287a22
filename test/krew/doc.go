// Package krew tests the release artifacts, the krew manifest and the
// README's install commands:
//
//   - krew.yaml at the top level is a template with no checksums of its own;
//     rendered for archives of every platform, it passes
//     validate-krew-manifest -skip-install;
//   - `go run ./hack/dist` for the host platform (and windows/amd64) writes
//     archives holding kubectl-inject, kinject-live, kinject-cel and LICENSE
//     (a zip of .exe files on windows), the Helm 4 plugin archives (the same
//     under kubectl-inject/, with plugin.yaml; test/helm installs one),
//     inject-fn and kinject-cel binaries, a checksums.txt that verifies, and
//     krew.yaml with the archives' sha256;
//   - the archives are reproducible (a second build gives the same bytes);
//   - the rendered manifest validates, `krew install --manifest --archive`
//     installs it into a temporary KREW_ROOT, and `kubectl inject --version`
//     runs the plugin through kubectl's plugin discovery;
//   - the README's krew and Go install commands, run as written in a copy of
//     the working tree (krew from `make dist`; go install of
//     plugin/kubectl-inject, plugin/kinject-live, plugin/kinject-cel and
//     fn/inject-fn into a clean
//     GOPATH from a module proxy on disk serving that copy as the latest
//     version), give a plugin that kubectl lists once and that runs, and
//     binaries named kubectl-inject, kinject-live, kinject-cel and inject-fn.
//
// Tools (krew, validate-krew-manifest, kubectl) are looked up on PATH, then in
// ${KINJECT_CACHE:-$HOME/.cache/kubectl-inject}/bin (hack/install-tools.sh).
// A missing tool skips the test, or fails it when CI=true. -short skips the
// tests that build. The first (cold) cross build takes minutes: run with
// -timeout 30m.
//
//	go test -timeout 30m ./test/krew
package krew
