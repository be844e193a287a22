// Command kubectl-inject is the kubectl plugin "kubectl inject": it adds a
// sidecar to the pod templates of live objects or local manifests.
//
// It is the front door of two binaries. A --local command line (files
// edited offline, the common case in CI and GitOps) is served here by
// plugin/local, which links no Kubernetes client and so starts in a few
// milliseconds with a few MB. Every other command line is handed, as is,
// to kubectl-inject-live beside it (plugin/kubectl-inject-live), the full
// command with cli-runtime and client-go; it runs --local through the same
// package, so both give the same output for the same command line.
package main
