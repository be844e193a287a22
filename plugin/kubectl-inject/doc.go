// Command kubectl-inject is the kubectl plugin "kubectl inject": it adds a
// sidecar to the pod templates of live objects or local manifests.
//
// It is the front door of two binaries. A --local command line (files
// edited offline, the common case in CI and GitOps) is served here by
// plugin/local, which links no Kubernetes client and so starts in a few
// milliseconds with a few MB. Every other command line is handed, as is,
// to kinject-live beside it (plugin/kinject-live), the full
// command with cli-runtime and client-go; it runs --local through the same
// package, so both give the same output for the same command line.
//
// The helper's name has no "kubectl-" prefix on purpose: kubectl takes
// every executable on PATH whose name starts with "kubectl-" for a plugin,
// so "kubectl plugin list" would show it as a second one. Wherever it is
// installed (krew, the release archives, make build, go install) it lies
// beside kubectl-inject, where the front door looks for it.
//
// Run by Helm 4 as its post-renderer plugin (plugin/helm/plugin.yaml; Helm
// sets HELM_PLUGIN_NAME), it works the same, except that a failure's
// message is also written to Helm's own stderr, which Helm 4.3 does not do
// for a post-renderer (helm.go), and that kinject-live then runs as a child.
package main
