// Package envoycheck validates the Envoy bootstrap a sidecar carries in
// its --config-yaml argument, for the tests of every door (the core's
// corpus, inject-fn's outputs, live injection, the Pods the admission
// policy writes): Envoy's own API at the pinned release, every
// typed_config unpacked and validated, every cluster a filter names
// present, listener ports distinct and none an app's.
package envoycheck
