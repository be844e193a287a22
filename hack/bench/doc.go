// Command bench measures kubectl-inject and inject-fn against the floor and
// against what users would run instead, all in one run, and writes the
// results as Markdown tables (docs/benchmarks.md) and to stdout. Every figure
// is given beside a ratio to a reference measured in the same run, because
// absolute times on shared machines are noisy. Timings never decide tests.
//
// Parts (each can be skipped):
//
//  1. core: kubectl-inject --local -f and inject-fn (KRM) on N generated apps
//     (pkg/manifest/gen: Deployment + Service + ConfigMap each), against the
//     floor (hack/bench/floor: streaming yaml.v3 no-op) and a kyaml
//     round trip (hack/bench/kyamlrt), wall time and peak RSS of each
//     subprocess, median of several runs.
//  2. kustomize: a hand-written strategic merge patch with target
//     {kind: Deployment} against kustomize build with inject-fn as an exec
//     function (N capped at 1,000: kustomize grows superlinearly).
//  3. startup: inject-fn on a one-Deployment ResourceList against the floor
//     program on the same input (median of many runs), and the binary size.
//  4. live: a throw-away etcd + kube-apiserver (test/cluster);
//     kubectl-inject deploy --all against a shell loop of kubectl patch,
//     with the API server's request counters before and after.
//  5. profile: a CPU profile of the core's text path (what --local runs) on
//     N = 1,000, summarized.
//  6. admission: the policy of `kubectl inject policy` (embedded template)
//     on a throw-away kube-apiserver: 1,000 Pods created with and without
//     it, interleaved, the API server's admission latency metrics, and the
//     cost of every CEL expression of the policy (hack/apiserver/celcost,
//     built in the nested module with the API server's CEL environment).
//  7. status: kubectl inject status -A on a throw-away kube-apiserver holding
//     1,000 Deployments (half injected) with a ReplicaSet and 3 Pods each,
//     against kubectl get deploy,pods -A -o json, interleaved; the requests
//     each sends (apiserver_request_total) and a check of status's JSON.
//  8. overrides: kubectl-inject --local with override annotations (one set
//     of values, or one per Deployment), a second profile and --uninject,
//     each against plain injection of the same apps, round-robin.
//  9. restart: kubectl inject restart against a kubectl rollout loop.
//  10. computed: kubectl-inject --local with the default template (its app
//     port computed from each pod template) against the floor and against
//     the same template with the port fixed, at -computed-ns; start-up of
//     inject-fn against a kyaml ResourceList round trip and of --local
//     against the fixed-port template; with -before DIR, another build's
//     binaries in the same rounds. Wall time, CPU time and peak RSS.
//
// Usage (from the repository root; make bench builds bin/ first and puts the
// tool cache on PATH):
//
//	go run ./hack/bench -out docs/benchmarks.md
//	go run ./hack/bench -skip-live -ns 100,1000
//	go run ./hack/bench -skip-core -skip-kustomize -skip-startup -skip-live -skip-profile -skip-status -skip-overrides -out /tmp/adm.md
//	go run ./hack/bench -skip-core -skip-kustomize -skip-startup -skip-live -skip-profile -skip-admission -skip-overrides -out /tmp/status.md
//	go run ./hack/bench -skip-core -skip-kustomize -skip-startup -skip-live -skip-profile -skip-admission -skip-status -skip-overrides -skip-restart -before /tmp/old-bin -out /tmp/computed.md
//
// The helper programs are built into a temporary directory with the same
// flags as bin/ (-trimpath, -ldflags "-s -w").
package main
