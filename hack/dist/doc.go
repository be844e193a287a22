// Command dist cross-builds the release artifacts and renders the krew
// manifest for them.
//
//	go run ./hack/dist -version v0.1.0 -commit abc1234 -out dist [-platforms linux/amd64,...]
//
// `make dist` runs it with the version of hack/version.sh. For every
// platform it writes into -out:
//
//	kubectl-inject_VERSION_OS_ARCH.tar.gz   (zip on windows) holding kubectl-inject, kinject-live, kinject-cel and LICENSE
//	kubectl-inject-V-helm-plugin-OS-ARCH.tgz the Helm 4 post-renderer plugin: the same under kubectl-inject/, with plugin.yaml
//	inject-fn_VERSION_OS_ARCH[.exe]         the raw KRM function binary (for exec mode)
//	kinject-cel_VERSION_OS_ARCH[.exe]       its CEL evaluator, installed as kinject-cel beside it (or on PATH)
//	checksums.txt                           sha256 of all of the above, `sha256sum -c` compatible
//	krew.yaml                               the krew manifest for the archives built
//
// The Helm plugin archive's plugin.yaml is plugin/helm/plugin.yaml with the
// release's version (V: VERSION without its "v", as Helm wants semver) and
// the command ${HELM_PLUGIN_DIR}/kubectl-inject, so it needs nothing on
// PATH. It is a .tgz on windows too: the one format `helm plugin install`
// reads.
//
// krew.yaml is rendered from the top-level krew.yaml, a template in
// krew-release-bot's syntax ({{ .TagName }}, addURIAndSha) that holds no
// checksums of its own: addURIAndSha takes the sha256 of the archive just
// built, and platforms not built (-platforms) are left out. A version that
// is not semantic (krew wants vX.Y.Z[-pre][+build]) gets no manifest.
// -skip-build renders it from the archives already in -out.
//
// Archives are reproducible: fixed modification times, fixed owners and modes,
// sorted entries, and binaries built with -trimpath -buildvcs=false.
package main
