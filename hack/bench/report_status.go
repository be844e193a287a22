package main

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// statusSection is section 7 and the goals of status.
func (r *report) statusSection() string {
	s := r.status
	if s == nil || len(s.Runs) == 0 {
		return ""
	}
	b, p := printer()
	p("## 7. Status: `kubectl inject status -A` against `kubectl get`\n\n")
	p("A throw-away etcd + kube-apiserver %s (test/cluster, ServiceAccount admission plugin\n", s.ServerVersion)
	p("off so that Pods need no ServiceAccount) holding %s Deployments (the generator's, %d\n", commas(s.Deployments), statusPodsPer)
	p("replicas): %s in `%s`, injected with `kubectl-inject deploy --all -n %s`, and\n", commas(s.Injected), s.InjectedNs, s.InjectedNs)
	p("%s in `%s`, not injected. No controller-manager runs: for every Deployment the bench\n", commas(s.Deployments-s.Injected), s.PlainNs)
	p("creates the ReplicaSet and the Pods its controllers would (the ReplicaSet `NAME-HASH`,\n")
	p("labeled `pod-template-hash` and controlled by the Deployment; %d Pods from its template,\n", statusPodsPer)
	p("as injected, controlled by the ReplicaSet; owner references with the UIDs the API server\n")
	p("gave): %s Deployments, %s ReplicaSets and %s Pods, created in %s.\n\n", commas(s.Deployments), commas(s.Deployments), commas(s.Pods), secs(s.Created))
	p("**status**: `bin/kubectl-inject status -A --kubeconfig K -o json > /dev/null` (kubectl-inject\n")
	p("hands the command to kinject-live beside it, by exec: one process). It lists deployments,\n")
	p("statefulsets, daemonsets, replicasets, cronjobs, jobs and pods in pages of %d and\n", s.PageSize)
	p("classifies every workload with the injection core; its JSON (one row per workload) is\n")
	p("%s. **kubectl**: `kubectl get deploy,pods -A -o json --kubeconfig K > /dev/null`, every\n", mb(int64(s.StatusBytes)))
	p("object in full (%s of JSON), pages of 500 (its default `--chunk-size`), with the\n", mb(int64(s.KubectlBytes)))
	p("preinstalled kubectl %s (`%s`). kubectl supports a server one minor version away;\n", s.KubectlVersion, s.KubectlPath)
	p("this server is further (`kubectl version`: \"%s\"), but `get` works. One\n", s.SkewWarning)
	p("untimed run of each first (kubectl's discovery cache, the page cache; their output is\n")
	p("checked, below), then %d rounds, the order alternating (status, kubectl; kubectl,\n", s.Rounds)
	p("status; ...); wall time and peak RSS through hack/bench/rusage.\n\n")
	t := &table{head: []string{"round", "status -A", "RSS", "kubectl get", "RSS", "status / kubectl"}}
	rounds := byRound(s.Runs, func(x statusRun) (int, string) { return x.Round, x.Side })
	for i := 0; i < s.Rounds; i++ {
		st, kc := rounds[i][sideStatus], rounds[i][sideKubectl]
		t.add(fmt.Sprint(i+1), secs(st.Wall), mb(st.MaxRSS), secs(kc.Wall), mb(kc.MaxRSS), ratio(st.Wall.Seconds(), kc.Wall.Seconds()))
	}
	st, kc := s.median(sideStatus), s.median(sideKubectl)
	rt := st.Seconds() / kc.Seconds()
	t.add("**median**", secs(st.Wall), mb(st.MaxRSS), secs(kc.Wall), mb(kc.MaxRSS), "**"+ratio(st.Seconds(), kc.Seconds())+"**")
	p("%s\n", t)

	p("**Requests** of each run, from the API server's `apiserver_request_total` scraped before\n")
	p("and after it (one figure when every run sent the same, else the range). Expected of\n")
	p("status: one LIST per page of each kind it reads. **Idle**, the control: in every round,\n")
	p("a window as long as that round's status run with no client running; what it counts\n")
	p("is the API server's own requests (its lease, its OpenAPI aggregation), which fall into\n")
	p("the other windows too when they happen to.\n\n")
	keys, cells := s.callCells()
	t = &table{head: []string{"request", "status -A", "kubectl get", "idle", "expected of status"}}
	for _, k := range keys {
		exp := ""
		if n, ok := s.Expected[k]; ok {
			exp = fmt.Sprint(n)
		}
		t.add("`"+k.String()+"`", cells[k][sideStatus], cells[k][sideKubectl], cells[k][sideIdle], exp)
	}
	all := func(side string) string {
		var xs []int
		for _, x := range s.runs(side) {
			xs = append(xs, x.Req.All)
		}
		return rangeOf(xs)
	}
	t.add("all", all(sideStatus), all(sideKubectl), all(sideIdle), "")
	p("%s\n", t)

	p("**Output checked** (the first, untimed run of each): status printed %s rows, all\n", commas(s.States[fleet.Current]+s.States[fleet.NotInjected]))
	p("Deployments and no Pod by itself (every Pod has its controller): %s current (`%s`)\n", commas(s.States[fleet.Current]), s.InjectedNs)
	p("and %s not-injected (`%s`), %s Pods counted (%d each) and %d behind their\n", commas(s.States[fleet.NotInjected]), s.PlainNs, commas(s.PodsCounted), statusPodsPer, s.PodsBehind)
	p("template: every Pod was made from its Deployment's template as it is, so none is behind\n")
	p("(the check catches a Pod counted twice, lost, or taken for outdated). kubectl printed\n")
	p("%s Deployments and %s Pods. The bench fails when either differs.\n\n", commas(s.KubectlItems["Deployment"]), commas(s.KubectlItems["Pod"]))

	ok, lists, other := s.listsOnly()
	expected := 0
	for _, n := range s.Expected {
		expected += n
	}
	r.goal(rt <= 1.5, fmt.Sprintf("`kubectl inject status -A` (%s Deployments, %s Pods) <= 1.5x `kubectl get deploy,pods -A -o json`", commas(s.Deployments), commas(s.Pods)),
		"%.2fx (median %s vs %s)", rt, secs(st.Wall), secs(kc.Wall))
	r.goal(ok, "`kubectl inject status -A`: list calls only, one per page of each kind", "%d LIST per run (expected %d); other requests, beside the server's own: %d", lists, expected, other)
	r.goal(true, "`kubectl inject status -A -o json`: the rows as created (checked; the part fails otherwise)",
		"%s current, %s not-injected, 0 bare Pods; pods %s, podsBehind %d", commas(s.States[fleet.Current]), commas(s.States[fleet.NotInjected]), commas(s.PodsCounted), s.PodsBehind)
	return b.String()
}
