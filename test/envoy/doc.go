// Package envoy checks the embedded default sidecar against Envoy's own
// API at the pinned release (github.com/envoyproxy/go-control-plane/envoy,
// the version of the image tag): every bootstrap the default produces,
// for the core's golden corpus and for generated Pods, is expanded as the
// kubelet expands $(VAR) in a container's args, parsed with protojson into
// config/bootstrap/v3.Bootstrap and validated (ValidateAll), then checked
// for what validation cannot see: routes to clusters that exist, listener
// ports apart from each other and from the app's, admin on 127.0.0.1, and
// the upstream port the Pod's.
package envoy
