// Command inject-fn is the kubectl-inject KRM function: it adds a sidecar
// to the pod templates of the resources kustomize, kpt or any KRM pipeline
// hands it. See fn/processor for the behaviour and `inject-fn --help` for
// usage.
package main
