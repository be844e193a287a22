package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/plugin/cmd"
)

// liveSection is section 4 and the goals of the live part.
func (r *report) liveSection() string {
	if len(r.live) == 0 {
		return ""
	}
	b, p := printer()
	p("## 4. Live: kubectl-inject against a kubectl patch loop\n\n")
	p("A throw-away etcd + kube-apiserver on loopback (test/cluster). N Deployments (the\n")
	p("generator's Deployment) are created in one namespace with client-go, 32 at a time. Then\n")
	p("`kubectl-inject deploy --all -n NS --kubeconfig ...` (default client rate limits: %.0f requests/s,\n", float64(cmd.DefaultQPS))
	p("bursts of %d; default concurrency), and once more on the injected objects. **Conservative**:\n", cmd.DefaultBurst)
	p("the same first run with `%s` (the limits kubectl uses for discovery), on other\n", strings.Join(conservativeRateFlags, " "))
	p("fresh Deployments. Requests are the API\n")
	p("server's `apiserver_request_total` before and after (resource=deployments by verb; \"all\"\n")
	p("also counts discovery and the server's own background requests).\n")
	p("The alternative is a bash loop of `kubectl patch deployment NAME --type strategic -p\n")
	p("PATCH` (the same container and volume) over fresh Deployments in another namespace.\n")
	sampled := false
	for _, l := range r.live {
		sampled = sampled || l.LoopN < l.N
	}
	if sampled {
		p("**Where the loop column says \"sample\", only that many Deployments were patched and the\n")
		p("loop's time for N is extrapolated linearly** (each kubectl patch is an independent\n")
		p("process doing the same requests).\n")
	}
	p("\n")
	t := &table{head: []string{"N", "kubectl-inject", "per object", "PATCH / object", "deployment requests",
		"all requests", "2nd run", "2nd run requests", "kubectl patch loop", "loop for N", "loop requests / object", "speed-up",
		"kubectl-inject " + strings.Join(conservativeRateFlags, " "), "speed-up, conservative"}}
	for _, l := range r.live {
		loop := secs(l.Loop)
		if l.LoopN < l.N {
			loop = fmt.Sprintf("%s (sample of %d)", secs(l.Loop), l.LoopN)
		}
		loopFull := l.LoopFull()
		est := secs(loopFull)
		if l.LoopN < l.N {
			est = "~" + est + " (extrapolated)"
		}
		loopPer := float64(0)
		for _, c := range l.LoopReq.Deployments {
			loopPer += float64(c)
		}
		t.add(commas(l.N), secs(l.Plugin), secs(l.Plugin/time.Duration(l.N)),
			fmt.Sprintf("%.2f", float64(l.PluginReq.verb("PATCH"))/float64(l.N)),
			l.PluginReq.String(), fmt.Sprint(l.PluginReq.All),
			secs(l.Second), fmt.Sprintf("%s (PATCH %d)", l.SecondReq.String(), l.SecondReq.verb("PATCH")),
			loop, est, fmt.Sprintf("%.2f", loopPer/float64(l.LoopN)),
			ratio(loopFull.Seconds(), l.Plugin.Seconds()),
			secs(l.Conservative), ratio(loopFull.Seconds(), l.Conservative.Seconds()))
	}
	p("%s\n", t)
	p("Request rate of the first run: ")
	for i, l := range r.live {
		if i > 0 {
			p(", ")
		}
		p("N=%d: %d requests in %s (%.0f/s; conservative: %d in %s, %.0f/s)", l.N, l.PluginReq.All, secs(l.Plugin), float64(l.PluginReq.All)/l.Plugin.Seconds(),
			l.ConservativeReq.All, secs(l.Conservative), float64(l.ConservativeReq.All)/l.Conservative.Seconds())
	}
	p(".\n\n")
	p("Plugin result lines: ")
	for i, l := range r.live {
		if i > 0 {
			p("; ")
		}
		p("N=%d first run %v, second run %v, conservative %v", l.N, l.PluginLines, l.SecondLines, l.ConservativeLines)
	}
	p(".\n\n")
	for _, l := range r.live {
		patchOK := l.PluginReq.verb("PATCH") == l.N
		r.goal(patchOK, fmt.Sprintf("live N=%d: 1 PATCH per changed object", l.N), "%d PATCH for %d objects", l.PluginReq.verb("PATCH"), l.N)
		r.goal(l.SecondReq.verb("PATCH") == 0, fmt.Sprintf("live N=%d: 0 PATCH when unchanged", l.N), "%d PATCH", l.SecondReq.verb("PATCH"))
		if l.N >= 1000 {
			sp := l.LoopFull().Seconds() / l.Plugin.Seconds()
			r.goal(sp >= 10, fmt.Sprintf("live N=%d: >= 10x faster than a kubectl patch loop (default flags)", l.N), "%.1fx (%s vs %s)", sp, secs(l.Plugin), secs(l.LoopFull()))
		}
	}
	return b.String()
}
