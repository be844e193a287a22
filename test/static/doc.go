// Package static tests the admission policy installed as static
// admission manifests (kubectl inject policy --static) on a real
// kube-apiserver v1.37.2 started with their AdmissionConfiguration:
// Pods created from the moment the API server is ready are injected, the
// corpus gives the same Pods as the policy installed through the API,
// changed files are reloaded (a broken change keeps the last good set),
// no client can remove the policy, and status, check and explain read it.
package static
