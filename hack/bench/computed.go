package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// computedResult is what part 10 measured: the default template, whose
// app port is computed from each pod template, against the floor and the
// same template with the port fixed, at every N and at start-up.
type computedResult struct {
	Rows    []computedRow
	Startup computedStartup
	// Before is the directory of the other build run beside this one
	// (-before), "" when none.
	Before string
}

// computedRow is one N of part 10, every program run in the same rounds.
type computedRow struct {
	N, Runs     int
	Floor       sample // floor FILE
	Local       sample // kubectl-inject --local -f FILE
	Fixed       sample // the same with the app port fixed
	LocalBefore sample // the -before build's --local, when given
	// PortShare and PortShareCPU are the median over rounds of each
	// round's (--local - fixed port) / --local: a pair run in the same
	// round shares the machine's state of the moment, which the ratio of
	// two medians does not.
	PortShare, PortShareCPU float64
}

// pairedShare is the median over rounds of 1 - fixed/local, of the wall
// time and of the CPU time.
func pairedShare(local, fixed []run) (wall, cpu float64) {
	walls := make([]float64, len(local))
	cpus := make([]float64, len(local))
	for i := range local {
		walls[i] = 1 - fixed[i].Wall.Seconds()/local[i].Wall.Seconds()
		cpus[i] = 1 - fixed[i].CPU.Seconds()/local[i].CPU.Seconds()
	}
	return medianOf(walls), medianOf(cpus)
}

// computedStartup is part 10's start-up on one Deployment.
type computedStartup struct {
	Runs                    int
	KyamlRL, Fn, FnBefore   sample
	Local, Fixed, LocBefore sample
}

// fixedPortTemplate writes the embedded default without the app port's
// expression: the port is the template's own 8080, nothing is computed.
func (e *env) fixedPortTemplate() (string, error) {
	src := inject.DefaultTemplateYAML()
	start := strings.Index(src, "  expression: |-")
	end := strings.Index(src, "- annotation: image")
	if start < 0 || end < start {
		return "", fmt.Errorf("the default template's app-port expression moved")
	}
	p := filepath.Join(e.tmp, "fixed-port.yaml")
	return p, os.WriteFile(p, []byte(src[:start]+src[end:]), 0o644)
}

// computed is part 10.
func (e *env) computed() error {
	fixed, err := e.fixedPortTemplate()
	if err != nil {
		return err
	}
	before := e.before
	res := &computedResult{Before: e.opts.before}
	for _, n := range e.opts.computedNs {
		in, err := e.input(n)
		if err != nil {
			return err
		}
		specs := []cmdSpec{
			{Name: "floor", Args: []string{e.floor, in}},
			{Name: "local", Args: []string{e.plugin, "--local", "-f", in}},
			{Name: "local-fixed", Args: []string{e.plugin, "--local", "-f", in, "--template", fixed}},
		}
		if before != "" {
			specs = append(specs, cmdSpec{Name: "local-before", Args: []string{filepath.Join(before, "kubectl-inject"), "--local", "-f", in}})
		}
		// The port's share is a few per cent of a run, less than single
		// runs spread on a shared machine: enough rounds to hold the
		// median of the paired shares still.
		runs := max(e.runsFor(n)+1, 11)
		if n <= 1000 {
			runs = max(runs, 21)
		}
		rounds, err := measureRounds(specs, runs, func(s cmdSpec) string { return e.outFile("computed-"+s.Name, n) }, nil)
		if err != nil {
			return err
		}
		row := computedRow{N: n, Runs: runs, Floor: median(rounds[0]), Local: median(rounds[1]), Fixed: median(rounds[2])}
		row.PortShare, row.PortShareCPU = pairedShare(rounds[1], rounds[2])
		if before != "" {
			row.LocalBefore = median(rounds[3])
		}
		for _, s := range specs[1:] {
			if got, err := countEnvoy(e.outFile("computed-"+s.Name, n)); err != nil || got != n {
				return fmt.Errorf("%s at N=%d injected %d sidecars, want %d (%v)", s.Name, n, got, n, err)
			}
		}
		res.Rows = append(res.Rows, row)
		logf("computed N=%d: floor %s | --local %s | fixed port %s", n, secs(row.Floor.Wall), secs(row.Local.Wall), secs(row.Fixed.Wall))
	}
	st, err := e.computedStartup(fixed)
	if err != nil {
		return err
	}
	res.Startup = st
	e.report.computed = res
	return nil
}

// computedStartup measures start-up on one Deployment, every program in
// the same rounds.
func (e *env) computedStartup(fixed string) (computedStartup, error) {
	src, err := genApps(1)
	if err != nil {
		return computedStartup{}, err
	}
	docs := splitDocs(src)
	rl := filepath.Join(e.tmp, "computed-one.rl.yaml")
	one := filepath.Join(e.tmp, "computed-one.yaml")
	if err := os.WriteFile(rl, wrapResourceList(docs[:1]), 0o644); err != nil {
		return computedStartup{}, err
	}
	if err := os.WriteFile(one, docs[0], 0o644); err != nil {
		return computedStartup{}, err
	}
	specs := []cmdSpec{
		{Name: "kyamlrt-rl", Args: []string{e.kyamlrt, "-rl"}, Stdin: rl},
		{Name: "inject-fn", Args: []string{e.fn}, Stdin: rl},
		{Name: "local", Args: []string{e.plugin, "--local", "-f", one}},
		{Name: "local-fixed", Args: []string{e.plugin, "--local", "-f", one, "--template", fixed}},
	}
	if b := e.before; b != "" {
		specs = append(specs,
			cmdSpec{Name: "inject-fn-before", Args: []string{filepath.Join(b, "inject-fn")}, Stdin: rl},
			cmdSpec{Name: "local-before", Args: []string{filepath.Join(b, "kubectl-inject"), "--local", "-f", one}})
	}
	out := filepath.Join(e.tmp, "computed-startup.out")
	if _, err := measureAll(specs, 1, out); err != nil {
		return computedStartup{}, err
	}
	res, err := measureAll(specs, e.opts.startupRuns, out)
	if err != nil {
		return computedStartup{}, err
	}
	st := computedStartup{Runs: e.opts.startupRuns, KyamlRL: res[0], Fn: res[1], Local: res[2], Fixed: res[3]}
	if len(res) > 4 {
		st.FnBefore, st.LocBefore = res[4], res[5]
	}
	logf("computed start-up: kyaml RL %s | inject-fn %s | --local %s | fixed port %s", secs(st.KyamlRL.Wall), secs(st.Fn.Wall), secs(st.Local.Wall), secs(st.Fixed.Wall))
	return st, nil
}
