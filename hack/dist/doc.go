// Command dist cross-builds the release artifacts and renders the krew manifest.
//
//	go run ./hack/dist -version v0.1.0 -commit abc1234 -out dist [-platforms linux/amd64,...] [-krew krew.yaml]
//
// For every platform it writes into -out:
//
//	kubectl-inject_VERSION_OS_ARCH.tar.gz   (zip on windows) holding the plugin binary and LICENSE
//	inject-fn_VERSION_OS_ARCH[.exe]         the raw KRM function binary (for exec mode)
//	checksums.txt                           sha256 of all of the above, `sha256sum -c` compatible
//
// Archives are reproducible: fixed modification times, fixed owners and modes,
// sorted entries, and binaries built with -trimpath -buildvcs=false.
//
// With -krew FILE the krew manifest is rendered from -template with the version
// and the archives' sha256 values (from -out/checksums.txt). -skip-build renders
// from artifacts already in -out. -shas-from MANIFEST takes the version and the
// sha256 values from an existing manifest instead, so a test can check that the
// checked-in krew.yaml is what the template renders (no build needed).
package main
