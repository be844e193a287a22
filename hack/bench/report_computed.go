package main

import "fmt"

// computedSection is section 10 and its goals.
func (r *report) computedSection() string {
	c := r.computed
	if c == nil || len(c.Rows) == 0 {
		return ""
	}
	b, p := printer()
	p("## 10. Computed values and start-up\n\n")
	p("`kubectl-inject --local -f FILE` with the embedded default, whose app port is computed\n")
	p("from each pod template by a CEL expression, against the floor and against the same\n")
	p("template with the port fixed (its `app-port` parameter without the expression), all in\n")
	p("the same rounds, round-robin. CPU is user + system time of the child: on a loaded\n")
	p("machine it moves less than wall time, and is given beside it.\n")
	if c.Before != "" {
		p("*before* is the build in `%s` (`-before`), run in the same rounds.\n", c.Before)
	}
	p("\n")
	head := []string{"N apps", "runs", "floor", "--local", "fixed port", "--local / floor (time)", "(CPU)", "(memory)", "fixed / floor (time)", "computing the port (time)", "(CPU)"}
	if c.Before != "" {
		head = append(head, "before / floor (time)", "(CPU)", "(memory)")
	}
	t := &table{head: head}
	var last computedRow
	for _, row := range c.Rows {
		if row.N >= last.N {
			last = row
		}
		cells := []string{commas(row.N), fmt.Sprint(row.Runs), secs(row.Floor.Wall), secs(row.Local.Wall), secs(row.Fixed.Wall),
			ratio(row.Local.Seconds(), row.Floor.Seconds()), ratio(row.Local.CPU.Seconds(), row.Floor.CPU.Seconds()), ratio(row.Local.MB(), row.Floor.MB()),
			ratio(row.Fixed.Seconds(), row.Floor.Seconds()), pct(row.PortShare), pct(row.PortShareCPU)}
		if c.Before != "" {
			cells = append(cells, ratio(row.LocalBefore.Seconds(), row.Floor.Seconds()), ratio(row.LocalBefore.CPU.Seconds(), row.Floor.CPU.Seconds()), ratio(row.LocalBefore.MB(), row.Floor.MB()))
		}
		t.add(cells...)
	}
	p("%s\n", t)
	p("*computing the port* is (--local - fixed port) / --local: the share of the run the\n")
	p("computed default costs, taken in each round (the two ran one after the other) and\n")
	p("given as the median over the rounds.\n\n")
	st := c.Startup
	p("Start-up on one Deployment, median of %d runs each, round-robin (one warm-up round):\n\n", st.Runs)
	t = &table{head: []string{"program", "median wall", "CPU", "peak RSS", "time / reference", "CPU / reference"}}
	t.add("kyaml ResourceList round trip (`kyamlrt -rl`, reference of inject-fn)", secs(st.KyamlRL.Wall), secs(st.KyamlRL.CPU), mb(st.KyamlRL.MaxRSS), "1.00x", "1.00x")
	t.add("inject-fn", secs(st.Fn.Wall), secs(st.Fn.CPU), mb(st.Fn.MaxRSS), ratio(st.Fn.Seconds(), st.KyamlRL.Seconds()), ratio(st.Fn.CPU.Seconds(), st.KyamlRL.CPU.Seconds()))
	if c.Before != "" {
		t.add("inject-fn, before", secs(st.FnBefore.Wall), secs(st.FnBefore.CPU), mb(st.FnBefore.MaxRSS), ratio(st.FnBefore.Seconds(), st.KyamlRL.Seconds()), ratio(st.FnBefore.CPU.Seconds(), st.KyamlRL.CPU.Seconds()))
	}
	t.add("--local, fixed port (reference of --local)", secs(st.Fixed.Wall), secs(st.Fixed.CPU), mb(st.Fixed.MaxRSS), "1.00x", "1.00x")
	t.add("--local, the default", secs(st.Local.Wall), secs(st.Local.CPU), mb(st.Local.MaxRSS), ratio(st.Local.Seconds(), st.Fixed.Seconds()), ratio(st.Local.CPU.Seconds(), st.Fixed.CPU.Seconds()))
	if c.Before != "" {
		t.add("--local, the default, before", secs(st.LocBefore.Wall), secs(st.LocBefore.CPU), mb(st.LocBefore.MaxRSS), ratio(st.LocBefore.Seconds(), st.Fixed.Seconds()), ratio(st.LocBefore.CPU.Seconds(), st.Fixed.CPU.Seconds()))
	}
	p("%s\n", t)

	tr, mr := last.Local.Seconds()/last.Floor.Seconds(), last.Local.MB()/last.Floor.MB()
	r.goal(tr <= 0.6, fmt.Sprintf("`--local` at %s apps: time <= 0.6x the floor's", commas(last.N)), "%.2fx (CPU %.2fx)", tr, last.Local.CPU.Seconds()/last.Floor.CPU.Seconds())
	r.goal(mr <= 1.3, fmt.Sprintf("`--local` at %s apps: peak memory <= 1.3x the floor's", commas(last.N)), "%.2fx", mr)
	worst, worstCPU := 0.0, 0.0
	for _, row := range c.Rows {
		worst = max(worst, row.PortShare)
		worstCPU = max(worstCPU, row.PortShareCPU)
	}
	r.goal(worst <= 0.05, "computing the app port <= 5% of `--local` time (the default against a fixed port), every N", "worst %.1f%% (CPU %.1f%%)", 100*worst, 100*worstCPU)
	fr := st.Fn.Seconds() / st.KyamlRL.Seconds()
	r.goal(fr <= 1.2, "`inject-fn` start-up <= 1.2x a kyaml ResourceList round trip", "%.2fx (CPU %.2fx)", fr, st.Fn.CPU.Seconds()/st.KyamlRL.CPU.Seconds())
	lr := st.Local.Seconds() / st.Fixed.Seconds()
	r.goal(lr <= 1.2, "`--local` start-up on one Deployment <= 1.2x the fixed-port template's", "%.2fx (CPU %.2fx)", lr, st.Local.CPU.Seconds()/st.Fixed.CPU.Seconds())
	return b.String()
}
