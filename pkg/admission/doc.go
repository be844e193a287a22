// Package admission compiles an injector (template and settings from
// pkg/inject) into admission policies that make the API server itself add
// the sidecar to every new Pod, with no webhook:
//
//   - a MutatingAdmissionPolicy (admissionregistration.k8s.io/v1,
//     Kubernetes 1.36+) whose JSON patches, written in CEL, add the
//     template's containers, init containers (native sidecars before the
//     app's own), volumes, labels and annotations, the default-container
//     annotation (first, as the core places it), and the same status
//     record, with the same template hash and override values, as the core
//     would;
//   - its binding, which carries the namespaces and the label selector:
//     only namespaces labelled NamespaceLabelFor(profile)=enabled, never
//     the system namespaces unless a namespace list names them (see
//     selection.go; the label selector is read by label_selector.go, a
//     parser of the API server's grammar, so that inject-fn links none of
//     apimachinery's); and, when the template needs an object of the Pod's
//     namespace (a ConfigMap it mounts), that object as the policy's
//     parameter with parameterNotFoundAction Allow, so the policy runs only
//     where it exists;
//   - a ValidatingAdmissionPolicy and binding (Warn, Audit) that tell the
//     client why a Pod was left as created: a refusal or a conflict, which
//     the mutating policy wrote in the skip mark with the core's message;
//     or, on a Pod with no mark, the parameter missing from its namespace
//     or an error of the mutating policy (validating.go).
//
// The core's pod-level skips (opted out, not opted in, hostNetwork,
// another mesh's proxy, a static pod's mirror) are the core's own data
// (inject.Policy.PodSkips), compiled to CEL by selection.go: the
// conditions of the skip mark, beside the match condition of the
// profile's own status record already there. Conflicts (a container or volume of the template's
// name that differs, a port a container already uses) are computed in CEL
// in the core's order with the core's message; a Pod with one is never half
// injected: it is left as created, marked with the reason and the message,
// and the validating policy returns the message as a warning and in the
// audit log.
//
// # Profiles
//
// A policy compiled for a named profile reads and writes that profile's
// annotations (NAME.sidecar.kinject.dev/status, .../inject, overrides; the
// seed's annotation opts in only the default profile) and its objects are
// called kinject-BASE-NAME, so every profile's policy can be installed
// beside the others. Other profiles' records on the Pod (injected at build
// time, or by another profile's policy earlier in the same admission) are
// read as the core reads them, by regular expressions over the compact
// JSON that record.Status.Encode writes (CEL has no JSON parser; the
// pattern is built from the record's grammar, inject.StatusGrammar): what
// they list is a conflict naming both profiles (inject.ConflictKind); a
// field they created is recorded as created here too; the
// default-container annotation another profile added is claimed; the first
// app container skips their sidecars. A record not written as Encode
// writes it (edited by hand) is refused as invalid_status.
//
// The API server runs two mutating policies in an order of its own: it
// lists them from a Go map whenever any policy or binding changes, so the
// order is fixed between changes and may differ after one (TestPolicyOrder
// in test/admission shows it). Each policy runs once (reinvocationPolicy
// Never; with IfNeeded both would run again and find their own record).
// The Pod stored is the core's injection of the profiles in that order.
//
// # Overrides
//
// The template's parameters are read from the Pod's annotations
// (parameters.go) and checked with the core's own patterns
// (ParameterType.Pattern, RE2 in both places; overrides.go); the value
// replaces the template's at the parameter's field, typed as the core
// types it, and is recorded in the status values (values.go). A value of
// the wrong type is refused: the Pod is left as created and marked, and
// the warning names the annotation and the value.
//
// # How the CEL is written
//
// Every expression is built with pkg/admission/expr, an expression tree
// printed with CEL's precedence, constants folded and lines folded to be
// read, and every variable is named for what it holds, with a comment
// saying so. What the policy mirrors of the core comes from the core's
// rule tables: the messages are the core's formats (inject.Message*), the
// conflicts its kinds (inject.ConflictKind), the record pattern its grammar
// (inject.StatusGrammar), the codes a Pod is refused with its table of
// reasons (inject.ReasonRules), the override checks its patterns.
// TestInProcess runs the compiled policies with the API server's own
// admission machinery (pkg/admission/inprocess, which explain uses too)
// over generated Pods and the golden corpus and compares every admitted
// Pod with the core's injection; docs/admission-policy.md says more.
//
// Only Pods are injected, at CREATE. The package imports the core; the
// core imports nothing of it. Objects are plain structs marshalled to JSON,
// so that inject-fn, which emits them too, links no Kubernetes API types.
package admission
