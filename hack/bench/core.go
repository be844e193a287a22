package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// coreRow is one N of part 1.
type coreRow struct {
	N, Docs    int
	InputBytes int64
	RLBytes    int64
	Runs       int
	Floor      sample // floor FILE
	CLI        sample // kubectl-inject --local -f FILE
	KyamlRT    sample // kyamlrt FILE (reference, not the floor)
	Fn         sample // inject-fn < RL
	KyamlRL    sample // kyamlrt -rl < RL
}

// core is part 1: kubectl-inject --local and inject-fn against the floor
// and the kyaml round trips, for every N.
func (e *env) core() error {
	// Warm up: load every binary into the page cache once.
	small, err := e.input(10)
	if err != nil {
		return err
	}
	smallRL, err := e.rlInput(10)
	if err != nil {
		return err
	}
	if _, err := measureAll(e.coreSpecs(small, smallRL), 1, filepath.Join(e.tmp, "warmup.out")); err != nil {
		return err
	}
	for _, n := range e.opts.ns {
		in, err := e.input(n)
		if err != nil {
			return err
		}
		rl, err := e.rlInput(n)
		if err != nil {
			return err
		}
		specs := e.coreSpecs(in, rl)
		runs := e.runsFor(n)
		// Each program writes to its own file so the outputs can be checked.
		res, err := measureRounds(specs, runs, func(s cmdSpec) string { return e.outFile(s.Name, n) }, nil)
		if err != nil {
			return err
		}
		row := coreRow{N: n, Docs: 3 * n, Runs: runs,
			Floor: median(res[0]), CLI: median(res[1]), KyamlRT: median(res[2]), Fn: median(res[3]), KyamlRL: median(res[4])}
		row.InputBytes = fileSize(in)
		row.RLBytes = fileSize(rl)
		for _, name := range []string{"kubectl-inject", "inject-fn"} {
			got, err := countEnvoy(e.outFile(name, n))
			if err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("%s at N=%d injected %d sidecars, want %d", name, n, got, n)
			}
		}
		for _, name := range []string{"floor", "kyamlrt", "kyamlrt-rl"} {
			if sz := fileSize(e.outFile(name, n)); sz < row.InputBytes/2 {
				return fmt.Errorf("%s at N=%d wrote only %d bytes", name, n, sz)
			}
		}
		e.coreCLI[n] = row.CLI
		e.report.core = append(e.report.core, row)
		logf("core N=%d: floor %s %s | --local %s %s | kyaml %s %s | inject-fn %s %s | kyaml RL %s %s",
			n, secs(row.Floor.Wall), mb(row.Floor.MaxRSS), secs(row.CLI.Wall), mb(row.CLI.MaxRSS),
			secs(row.KyamlRT.Wall), mb(row.KyamlRT.MaxRSS), secs(row.Fn.Wall), mb(row.Fn.MaxRSS),
			secs(row.KyamlRL.Wall), mb(row.KyamlRL.MaxRSS))
	}
	return nil
}

// coreSpecs are the programs of part 1 on the stream in and the
// ResourceList rl, in the order of coreRow's samples.
func (e *env) coreSpecs(in, rl string) []cmdSpec {
	return []cmdSpec{
		{Name: "floor", Args: []string{e.floor, in}, SampleAnon: true},
		{Name: "kubectl-inject", Args: []string{e.plugin, "--local", "-f", in}, SampleAnon: true},
		{Name: "kyamlrt", Args: []string{e.kyamlrt, in}},
		{Name: "inject-fn", Args: []string{e.fn}, Stdin: rl},
		{Name: "kyamlrt-rl", Args: []string{e.kyamlrt, "-rl"}, Stdin: rl},
	}
}

// outFile is where the program name writes its output at N = n.
func (e *env) outFile(name string, n int) string {
	return filepath.Join(e.tmp, fmt.Sprintf("%s-%d.out", name, n))
}

// fileSize is the size of the file at p, 0 when it cannot be read.
func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
