// Command kubectl-inject is the kubectl plugin "kubectl inject": it adds a
// sidecar to the pod templates of live objects or local manifests.
package main
