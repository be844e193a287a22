package main

import (
	"fmt"
	"sort"
)

// restartSection is section 9 and the goal of restart.
func (r *report) restartSection() string {
	s := r.restart
	if s == nil {
		return ""
	}
	b, p := printer()
	p("## 9. Restart: `kubectl inject restart` against `kubectl rollout restart` + `kubectl rollout status`\n\n")
	p("A throw-away cluster with its control plane (test/cluster: kube-apiserver,\n")
	p("kube-controller-manager, kube-scheduler v1.37.2, kwok Nodes that make Pods Ready at\n")
	p("once). Deployments of one Pod in namespaces with injection at admission on, the policy\n")
	p("then upgraded (a new sidecar image): every Pod is behind. **restart**: `bin/kubectl-inject\n")
	p("restart -n NS --template v2.yaml --max-in-flight %d -o json` on %s Deployments. **loop**:\n", s.MaxInFlight, commas(s.Deployments))
	p("what a script does, for each Deployment `kubectl rollout restart deploy/NAME` then\n")
	p("`kubectl rollout status deploy/NAME` (kubectl %s, built from the same release), on\n", s.KubectlVersion)
	p("%s other Deployments; its figures are per Deployment and its total is extrapolated\n", commas(s.LoopSample))
	p("linearly. Requests are counted by a proxy in front of the API server that both clients\n")
	p("talk to (the controllers' requests are not counted); a watch counts once.\n\n")
	perR := float64(total(s.RestartRequests)) / float64(s.Deployments)
	perL := float64(total(s.LoopRequests)) / float64(s.LoopSample)
	loopAll := s.Loop.Seconds() / float64(s.LoopSample) * float64(s.Deployments)
	t := &table{head: []string{"", "restart", "loop", "restart / loop"}}
	t.add("requests per Deployment", fmt.Sprintf("%.2f", perR), fmt.Sprintf("%.2f", perL), ratio(perR, perL))
	t.add("requests, by method", methods(s.RestartRequests), methods(s.LoopRequests), "")
	t.add("wall time per Deployment", fmt.Sprintf("%.3f s", s.Restart.Seconds()/float64(s.Deployments)), fmt.Sprintf("%.3f s", s.Loop.Seconds()/float64(s.LoopSample)), ratio(s.Restart.Seconds(), loopAll))
	t.add(fmt.Sprintf("wall time for %s Deployments", commas(s.Deployments)), secs(s.Restart), fmt.Sprintf("%.1f s (extrapolated)", loopAll), ratio(s.Restart.Seconds(), loopAll))
	t.add("most rolling at once", fmt.Sprint(s.RestartMaxInFlight), "1", "")
	p("%s\n", t)
	p("restart opens one watch per kind it reads (a streaming list, then the changes; a LIST\n")
	p("and a WATCH on servers without streaming lists) and patches each Deployment once; the loop\n")
	p("starts two processes per Deployment, each of which reads the Deployment, and `rollout\n")
	p("status` watches it until done. Restart's wall time is bounded by the rollouts it waits\n")
	p("on, %d at a time.\n\n", s.MaxInFlight)
	r.goal(perR < perL && s.Restart.Seconds() < loopAll, "restart: fewer requests and less time than a kubectl rollout loop",
		"%.2f vs %.2f requests per Deployment, %s vs %.1f s", perR, perL, secs(s.Restart), loopAll)
	return b.String()
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func methods(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}
