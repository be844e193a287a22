package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// inplaceSection is section 11. It is rendered after the report's other
// sections (main appends it); its checks are in its own table.
func inplaceSection(s *inplaceResult) string {
	if s == nil {
		return ""
	}
	b, p := printer()
	pods := s.Deployments * s.Replicas
	p("## 11. In place: `kubectl inject restart` upgrading %s Pods in place against `kubectl rollout restart`\n\n", commas(pods))
	p("A throw-away cluster with its control plane (test/cluster: kube-apiserver,\n")
	p("kube-controller-manager, kube-scheduler v1.37.2, %d kwok Nodes of %s Pods each that make\n", s.Nodes, commas(kwokPodsPerNode))
	p("Pods Ready at once and report a sidecar image changed in place as running). %d Deployments\n", s.Deployments)
	p("of %d replicas (%s Pods) in a namespace with injection at admission (`policy --apply`,\n", s.Replicas, commas(pods))
	p("`enable NS`, sidecar `%s`), Ready in %s. Then, on the same fleet:\n\n", s.ImageA, secs(s.Setup))
	p("- **in place**: `policy --apply --image %s`, then `bin/kubectl-inject restart -n NS\n", inplaceImageB)
	p("  --drain=false --max-in-flight %d -o json` (kwok runs no proxy to drain), timed until it\n", s.MaxInFlight)
	p("  exits 0. `--max-in-flight` bounds both the workloads moving at once and the Pods being\n")
	p("  upgraded at once across the fleet; each Deployment's own budget is %d Pods at a time\n", s.Budget)
	p("  (%s).\n", s.BudgetWhy)
	p("- **rollout restart**: `policy --apply --image %s`, then `kubectl rollout restart\n", inplaceImageC)
	p("  deploy/NAME` for each of the %d Deployments, then `kubectl rollout status deploy/NAME` for\n", s.Deployments)
	p("  each (kubectl %s), timed until no Pod of before is left, terminating ones included\n", s.KubectlVersion)
	p("  (what kubectl inject restart waits for): the last `rollout status` exited after %s.\n\n", secs(s.StatusDone))
	p("Client requests are counted by a proxy in front of the API server that both clients talk\n")
	p("to (a watch counts once); *all clients* is the API server's `apiserver_request_total`\n")
	p("over the same time, controllers, scheduler and kwok included (and the bench's own watch of\n")
	p("the Pods, one LIST and its WATCHes, started before either). `kubectl rollout restart`\n")
	p("itself sends few requests: the controllers, the scheduler and the kubelet (kwok) create,\n")
	p("bind, start and delete the Pods. A Pod is *pending* from the first time that watch sees\n")
	p("the new image in its spec (in place: restart's PATCH; rollout: the new Pod) until it is\n")
	p("Ready with it in its status.\n\n")
	p("%s\n", inplaceTable(s))
	p("%s\n", inplaceWhere(s))
	lo, med, hi := spread(s.WorkloadSeconds)
	p("restart's report: %d workloads done (%s), most moving at once %d; seconds per workload\n", len(s.WorkloadSeconds), strategies(s.Strategies), s.ReportMaxInFlight)
	p("min %.1f, median %.1f, max %.1f. All clients, by call: in place %s; rollout restart %s.\n\n", lo, med, hi, topCalls(s.InPlace.Server.Calls, 5), topCalls(s.Rollout.Server.Calls, 5))
	t := &table{head: []string{"check", "measured", "met"}}
	for _, c := range inplaceChecks(s) {
		t.add(c.what, c.measured, yesNo(c.met))
	}
	p("%s\n", t)
	return b.String()
}

// inplaceTable is section 11's table: the two phases side by side and
// their ratios.
func inplaceTable(s *inplaceResult) *table {
	pods := float64(s.Deployments * s.Replicas)
	in, ro := s.InPlace, s.Rollout
	reqI, reqR := float64(total(in.Requests)), float64(total(ro.Requests))
	allI, allR := float64(in.Server.All), float64(ro.Server.All)
	t := &table{head: []string{"", "in place", "rollout restart", "in place / rollout restart"}}
	t.add("wall time", secs(in.Wall), secs(ro.Wall), ratio(in.Wall.Seconds(), ro.Wall.Seconds()))
	if in.FirstStarted > 0 {
		t.add("first workload started after", secs(in.FirstStarted), "", "")
	}
	t.add("Pods per second", perSecond(pods, in.Wall.Seconds()), perSecond(pods, ro.Wall.Seconds()), ratio(ro.Wall.Seconds(), in.Wall.Seconds()))
	t.add("client CPU time (user + system)", secs(in.ClientCPU), secs(ro.ClientCPU), ratio(in.ClientCPU.Seconds(), ro.ClientCPU.Seconds()))
	t.add("client requests per Pod", fmt.Sprintf("%.3f", reqI/pods), fmt.Sprintf("%.3f", reqR/pods), ratio(reqI, reqR))
	t.add("client requests, by method", methods(in.Requests), methods(ro.Requests), "")
	t.add("all clients' requests per Pod", fmt.Sprintf("%.2f", allI/pods), fmt.Sprintf("%.2f", allR/pods), ratio(allI, allR))
	t.add("Pods recreated (new UID)", commas(in.Recreated), commas(ro.Recreated), "")
	t.add("Pods Ready on the new image", commas(in.OnNewImage), commas(ro.OnNewImage), "")
	t.add("Pod pending on the new image: median / p90 / max", pendingStats(in.Pending), pendingStats(ro.Pending), "")
	t.add("Pods pending on the new image at once: mean / most", fmt.Sprintf("%.1f / %d", meanAtOnce(in.Pending, in.Wall), in.PeakUpgrading), fmt.Sprintf("%.1f / %d", meanAtOnce(ro.Pending, ro.Wall), ro.PeakUpgrading), "")
	t.add("most Pods at once (terminating included)", commas(in.PeakPods), commas(ro.PeakPods), "")
	return t
}

// inplaceChecks are what section 11 requires of the phases.
func inplaceChecks(s *inplaceResult) []goal {
	pods := s.Deployments * s.Replicas
	in, ro := s.InPlace, s.Rollout
	return []goal{
		{"in place: no Pod recreated", fmt.Sprintf("%d of %d Pods have a new UID, %d kept theirs", in.Recreated, pods, in.Kept), in.Recreated == 0 && in.Kept == pods},
		{"in place: every Pod Ready on " + inplaceImageB, fmt.Sprintf("%d of %d", in.OnNewImage, pods), in.OnNewImage == pods},
		{"rollout restart: every Pod recreated", fmt.Sprintf("%d of %d Pods have a new UID, %d of before left", ro.Recreated, pods, ro.OldLeft+ro.Kept), ro.Recreated == pods && ro.OldLeft+ro.Kept == 0},
		{"rollout restart: every Pod Ready on " + inplaceImageC, fmt.Sprintf("%d of %d", ro.OnNewImage, pods), ro.OnNewImage == pods},
		{"in place faster than rollout restart", fmt.Sprintf("%s vs %s", secs(in.Wall), secs(ro.Wall)), in.Wall < ro.Wall},
	}
}

// perSecond formats n / s, "n/a" without time.
func perSecond(n, s float64) string {
	if s <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", n/s)
}

// spread is the least, median and largest of v (zeros when empty).
func spread(v []float64) (lo, med, hi float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[0], medianFloat(s), s[len(s)-1]
}

// strategies lists "action/strategy" counts: "in-place/in-place 10".
func strategies(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %d", strings.TrimSuffix(k, "/"), m[k]))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// topCalls lists the n most frequent calls, most first (ties by name),
// then how many requests the others made.
func topCalls(m map[call]int, n int) string {
	type kv struct {
		c call
		n int
	}
	var l []kv
	rest := 0
	for c, v := range m {
		l = append(l, kv{c, v})
	}
	sort.Slice(l, func(a, b int) bool {
		if l[a].n != l[b].n {
			return l[a].n > l[b].n
		}
		return l[a].c.String() < l[b].c.String()
	})
	var out []string
	for i, x := range l {
		if i < n {
			out = append(out, fmt.Sprintf("%s %s", x.c, commas(x.n)))
		} else {
			rest += x.n
		}
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("others %s", commas(rest)))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// pendingStats is "median / p90 / max" of the durations, "n/a" for none.
func pendingStats(d []time.Duration) string {
	if len(d) == 0 {
		return "n/a"
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	at := func(q float64) time.Duration { return s[int(q*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("%s / %s / %s", secs(at(0.5)), secs(at(0.9)), secs(s[len(s)-1]))
}

// meanAtOnce is how many were pending at once on average over wall: the
// sum of their durations over it.
func meanAtOnce(d []time.Duration, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum.Seconds() / wall.Seconds()
}

// inplaceWhere says where restart's time went, from the figures.
func inplaceWhere(s *inplaceResult) string {
	in := s.InPlace
	med := "n/a"
	if len(in.Pending) > 0 {
		med = strings.SplitN(pendingStats(in.Pending), " / ", 2)[0]
	}
	gets := in.Server.Calls[call{Verb: "GET", Resource: "pods"}]
	patches := in.Server.Calls[call{Verb: "PATCH", Resource: "pods"}]
	pdbs := in.Server.Calls[call{Verb: "LIST", Group: "policy", Resource: "poddisruptionbudgets"}]
	return fmt.Sprintf("Where restart's %s went: its first workload started after %s (reading the fleet and planning, %s of CPU in all);\n"+
		"then Pods were pending on the new image %.1f at a time on average, at most %d, under --max-in-flight %d, each %s (median)\n"+
		"from its PATCH to Ready. The rest is restart's own work per batch, whose Pods it upgrades together and waits on to the\n"+
		"slowest: the API server saw %s GETs and %s PATCHes of Pods and %s LISTs of PodDisruptionBudgets (one per batch).\n",
		secs(in.Wall), secs(in.FirstStarted), secs(in.ClientCPU), meanAtOnce(in.Pending, in.Wall), in.PeakUpgrading, s.MaxInFlight, med,
		commas(gets), commas(patches), commas(pdbs))
}
