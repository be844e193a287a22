// Package processor is the inject-fn KRM function: it reads a
// ResourceList (config.kubernetes.io/v1) and adds the sidecar template to
// every selected pod template among its items, using the injection core in
// pkg/inject.
//
// The function config (ResourceList.functionConfig) may be:
//
//   - absent: the embedded default Envoy template, opt-out mode;
//   - a kinject.dev/v1alpha1 SidecarInjection: spec.template (a partial Pod
//     spec) or spec.templateRef (a ConfigMap among the items), plus
//     settings such as spec.mode and spec.native;
//   - a ConfigMap of flat settings, which is what `kpt fn eval -- key=value`
//     produces (mode, native, image, kinds, namespaces, selector,
//     injectHostNetwork, podTemplatePaths, template-configmap);
//   - the seed Initializer's ConfigMap: a partial Pod spec under data.config,
//     optionally next to flat settings.
//
// Each form also takes admissionPolicy (true: emit the admission policy
// of pkg/admission into the output instead of injecting the items, so a
// GitOps repository ships it; see emitPolicy) and uninject ("true" in a
// ConfigMap, true in a
// SidecarInjection spec), which removes earlier injections instead.
//
// Items that are not selected pass through untouched, reader annotations
// included. Every workload gets an info result (injected, updated,
// unchanged or skipped with a reason) carrying its resourceRef and file;
// objects that cannot be injected, and a bad function config, get error
// results. Results are appended to the ones that came in; Run reports
// failure after writing the complete ResourceList, so the function exits
// non-zero while still writing its output, as the KRM functions
// specification asks.
//
// Main is the command line: no arguments runs the KRM function on stdin;
// `inject-fn CONFIG.yaml INPUT.yaml...` edits plain multi-document YAML
// files in text form, keeping every byte the injection does not touch.
package processor
