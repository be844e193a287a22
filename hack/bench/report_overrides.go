package main

import "fmt"

// overridesSection is section 8 and its goal.
func (r *report) overridesSection() string {
	if len(r.overrides) == 0 {
		return ""
	}
	b, p := printer()
	p("## 8. Profiles and override annotations: `kubectl-inject --local`\n\n")
	p("The core part's input (N apps) through `kubectl-inject --local -f FILE`, in six ways run\n")
	p("round-robin in every round (one uncounted warm-up round first), each against the\n")
	p("first: plain injection of the same apps. *shared*: every Deployment's pod template asks\n")
	p("for `cpu-request: 250m` and `memory-limit: 1Gi` (one set of values: the sidecar is built\n")
	p("once). *distinct*: every Deployment asks for a CPU request of its own (a sidecar built\n")
	p("per Deployment; the injector keeps %d sets). *second profile*: a secrets agent\n", 256)
	p("(`spec.profile: agent`, its own volume, annotation and parameter) onto the injected\n")
	p("apps. Then `--uninject` of the default profile (the agent stays) and `--uninject\n")
	p("--all-profiles`. Every output is checked: the sidecars and values asked for, and\n")
	p("`--all-profiles` giving the input back byte for byte.\n\n")
	shared := 0.0
	for _, row := range r.overrides {
		base := median(row.Cases[0].Runs)
		t := &table{head: []string{fmt.Sprintf("N = %s apps", commas(row.N)), "input", "time", "RSS", "/ plain"}}
		for _, c := range row.Cases {
			m := median(c.Runs)
			rt := m.Seconds() / base.Seconds()
			if c.Name == "shared" {
				shared = max(shared, rt)
			}
			t.add(c.What, mb(c.InputBytes), secs(m.Wall), mb(m.MaxRSS), ratio(m.Seconds(), base.Seconds()))
		}
		p("%s\n", t)
	}
	p("*distinct* is the worst case: every sidecar is written out anew instead of reusing the\n")
	p("text of one, which is what makes *plain* and *shared* fast. The last three rows read\n")
	p("the apps with both sidecars, a larger input (the input column).\n\n")
	r.goal(shared <= 1.2, "override annotations (one set of values): `--local` time / plain injection (goal <= 1.2x)", "%.2fx", shared)
	return b.String()
}
