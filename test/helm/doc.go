// Package helm runs the chart of examples/helm through every route that
// docs/gitops.md gives Helm users, with real Helm built from source
// (hack/install-tools.sh installs Helm 3.22.0 as helm3 and Helm 4.3.1 as
// helm4 in the tool cache):
//
//   - Helm 4 with the post-renderer plugin (plugin/helm), installed with
//     `helm plugin install` from the directory (kubectl-inject on PATH) and
//     from the archive `make dist` ships (nothing on PATH): `helm template`
//     and `helm install --dry-run=client` inject every workload, hooks
//     included, into the same objects as piping `helm template` into
//     `kubectl inject --local -f -` (compared parsed: Helm 4 re-serializes
//     whatever a post-renderer prints); settings reach it through
//     --post-renderer-args; a bad template makes Helm exit non-zero with
//     kubectl-inject's message;
//   - Helm 3 with kubectl-inject as its exec post-renderer: the same, except
//     hooks, which Helm 3 never post-renders (helm/helm#7891);
//   - kustomize helmCharts with inject-fn as a transformer (the Argo CD
//     route): the output of examples/helm/expected.yaml;
//   - Flux's routes without Flux: the manifests rendered and injected in CI
//     are current (examples/helm/flux).
//
// Every Helm command runs with throw-away HELM_DATA_HOME, HELM_CONFIG_HOME
// and HELM_CACHE_HOME. A missing helm3, helm4 or kustomize skips the tests
// that need it, or fails them when CI=true. -short skips everything here;
// -update rewrites the expected output.
//
//	go test ./test/helm -v
package helm
