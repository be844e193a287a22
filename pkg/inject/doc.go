// Package inject is the injection core shared by the kubectl-inject plugin
// and the inject-fn KRM function: pure functions over kyaml nodes, with no
// I/O, no client and no command line.
//
// A Template is a partial Pod spec (containers, initContainers, volumes and
// pod metadata). LoadConfig reads one from any supported document: the seed
// Initializer's ConfigMap (data.config), a bare partial Pod spec, or a
// kinject.dev/v1alpha1 SidecarInjection; DefaultTemplate is the embedded
// Envoy sidecar. The defaults of earlier versions stay embedded
// (earlier_defaults/, each file named by its template hash): a
// SidecarInjection without a template, as Injector.Document writes one for
// a built-in default, is read back by that hash (BuiltinTemplate).
//
// New combines a template with Settings (selection policy, native sidecars,
// image override, pod-template paths of custom kinds) into an Injector.
// The injector works on one document at a time, two ways:
//
//   - ProcessText edits the document's text: the change is computed on the
//     parsed nodes and applied at the positions the parser reported, so
//     every byte outside the injected lines stays as the user wrote it.
//     Where that is impossible (a flow-style containers list, say) the
//     document is re-serialized and the report says so. Its parse is
//     ParseText, which reads no injector state, so that a front end can
//     parse the next documents on other cores (manifest.ProcessAhead)
//     and hand each to ProcessParsed, which does the rest.
//   - ProcessNode edits a parsed document in place, for callers that
//     serialize anyway (KRM functions).
//
// The pipeline, for each document: parse it (document.go, through
// yamltext.Decode); find its objects and their pod templates (targets.go);
// read every profile's record on the template (records.go) and decide
// what to do, or why to skip (process.go, policy.go); read the object's
// parameter values (values.go); plan the change as edits against the
// parsed tree: merge.go, conflicts.go, port_conflicts.go and metadata.go
// for injection, uninject.go for removal; apply the edits, to the text with
// pkg/yamltext (which keeps every byte outside the changed lines) or to the
// nodes; and describe each object in the report (report.go). The record
// itself, its grammar, reading and writing, is the package record
// (pkg/inject/record), which knows nothing of templates or objects.
// The template is package template (pkg/inject/template); the names of
// annotations and labels are package naming; the grammars of values
// (ports, quantities, images, DNS names) are package grammar. Each step
// reads them, and none of them reads the injector.
//
// Each injection leaves the status annotation sidecar.kinject.dev/status on
// the pod template: a record of exactly what was added or changed and the
// template's hash. With it, injecting again changes nothing, a changed
// template replaces the old parts, and OpUninject restores the object byte
// for byte. Every object gets an Entry in the report; skips are data with a
// stable snake_case Reason, not errors.
//
// The rules the admission policy (pkg/admission) writes again in CEL are
// written once here, as data it reads: the table of reasons (reasons.go,
// from which docs/selection.md's table is generated), the kinds of
// conflicts and the record lists that name their owners
// (conflict_kinds.go), the record's grammar (record.Grammar), and the
// message formats (messages.go).
//
// Profiles (Settings.Profile) let several sidecars live in one pod
// template: profile NAME keeps its record and its switches under
// NAME.sidecar.kinject.dev/*, and is injected, upgraded and removed on its
// own. A profile never takes what another's record lists (that is a
// conflict naming both), and records a field another profile created when
// it adds to it, so that removing either profile leaves exactly what
// injecting only the other would have written.
//
// A template's Parameters name the fields a workload may override with an
// annotation. The values are checked by type, written into the sidecar
// for that object only, and kept in the record (record.Status.Values): an object
// is current while both the template hash and the values match.
//
// A parameter may also compute its value from the pod template: its
// Expression is CEL over the pod template seen as a Pod (object.metadata,
// object.spec), in the environment of Kubernetes' admission policies,
// under the API server's cost limit, and used when the annotation is not
// set; the value is recorded like an override's, so a changed port makes
// the object stale. The expression sees the pod template without what the
// profile itself injected (expressionPod), so that an update computes what
// the first injection did. The package podexpr evaluates it (its subset
// itself, the rest with cel-go, which the core does not link: package
// podexpr/celgo in the process, or the kinject-cel helper); the template's
// Parameter.Compute turns its result into the parameter's value, and
// values.go gathers an object's values.
package inject
