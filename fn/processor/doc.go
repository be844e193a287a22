// Package processor is the inject-fn KRM function: it reads a
// ResourceList (config.kubernetes.io/v1) and adds the sidecar template to
// every selected pod template among its items, using the injection core in
// pkg/inject.
//
// The function config (ResourceList.functionConfig), which pkg/config
// reads (config.LoadFunction) with the settings' one schema, may be:
//
//   - absent: the embedded default Envoy template, opt-out mode;
//   - a kinject.dev/v1alpha1 SidecarInjection: spec.template (a partial Pod
//     spec) or spec.templateRef (a ConfigMap among the items), plus
//     settings such as spec.mode and spec.native;
//   - a ConfigMap of flat settings, which is what `kpt fn eval -- key=value`
//     produces (any setting of inject.Settings; a list comma-separated, a
//     boolean "true" or "false");
//   - the seed Initializer's ConfigMap: a partial Pod spec under data.config,
//     optionally next to flat settings.
//
// Several SidecarInjections configure several profiles (spec.profile:
// NAME; none is the default profile), each with its own template and
// settings and its own NAME.sidecar.kinject.dev/* annotations, applied one
// after the other:
//
//   - a function config that is not among the items (kustomize's
//     transformer config, kpt fn eval --fn-config or -- key=value) is the
//     only config of the run, whatever the items hold: each kustomize
//     transformer config is a run of its own, and `uninject=true
//     allProfiles=true` removes every profile without injecting the
//     package's again;
//   - otherwise (no function config, the empty ConfigMap kpt fn eval sends
//     without arguments, or a function config that is also an item, as
//     kpt fn render sends a Kptfile's configPath) the SidecarInjections
//     among the items are the configs, in the order of the items, the
//     function config at its own place among them; with none, the
//     function config or the embedded default is used.
//
// A profile configured twice, or an allProfiles uninject beside other
// configs, is an error naming both configs, and nothing changes. Each
// profile is atomic on each object: when a later profile fails on an
// object (two profiles adding the same container, volume, port or label
// is a conflict naming both), the object keeps the earlier profiles'
// injections and gets an error result. Results name the profile when
// there are several, or when the only one is a named profile.
//
// Each form also takes admissionPolicy (true: emit the admission policy
// of pkg/admission into the output instead of injecting the items, so a
// GitOps repository ships it; one policy set per profile that asks,
// kinject-NAME or kinject-NAME-PROFILE after its SidecarInjection NAME, two
// profiles writing the same object name being an error; see emitPolicy)
// and uninject ("true" in a ConfigMap, true in a SidecarInjection spec),
// which removes the profile's earlier injections instead, or every
// profile's with allProfiles.
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
// files in text form, keeping every byte the injection does not touch;
// when the config file starts with a SidecarInjection, each
// SidecarInjection in it is a profile, applied in order.
package processor
