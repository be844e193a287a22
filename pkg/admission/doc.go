// Package admission compiles an injector (template and settings from
// pkg/inject) into admission policies that make the API server itself add
// the sidecar to every new Pod, with no webhook:
//
//   - a MutatingAdmissionPolicy (admissionregistration.k8s.io/v1,
//     Kubernetes 1.36+) whose JSON patches, written in CEL, add the
//     template's containers, init containers (native sidecars before the
//     app's own), volumes, labels and annotations, the default-container
//     annotation, and the same status record sidecar.kinject.dev/status,
//     with the same template hash, as the core would;
//   - its binding, which carries the namespaces and the label selector;
//   - a ValidatingAdmissionPolicy and binding (Warn, Audit) that tell the
//     client why a Pod was left as created.
//
// The core's pod-level skips (opted out, not opted in, hostNetwork,
// another mesh's proxy, a status record already there) are match
// conditions. Conflicts (a container or volume of the template's name
// that differs, a port a container already uses) are computed in CEL in
// the core's order with the core's message; a Pod with one is never half
// injected: it is left as created and the validating policy returns the
// message as a warning and in the audit log.
//
// Only Pods are injected, at CREATE. The package imports the core; the
// core knows nothing of it. Objects are plain structs marshalled to JSON,
// so that inject-fn, which emits them too, links no Kubernetes API types.
package admission
