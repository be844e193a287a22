package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// startupResult is what part 3 measured.
type startupResult struct {
	Runs                   int
	Fn, Floor, KyamlRL     sample
	KyamlNoop              sample // kyamlrt -noop: linking kyaml, doing nothing
	Plugin                 sample // kubectl-inject --local -f on the same Deployment
	PluginLive             sample // kinject-live --local -f: the same with client-go linked
	FnSize, PluginSize     int64
	PluginLiveSize         int64
	FloorSize, KyamlRTSize int64
	ClientGoInFn           int // packages under k8s.io/client-go in go list -deps ./fn/inject-fn
}

// startup is part 3: the start-up of inject-fn and the other programs on
// one Deployment, and the binary sizes.
func (e *env) startup() error {
	src, err := genApps(1)
	if err != nil {
		return err
	}
	docs := splitDocs(src)
	rl := filepath.Join(e.tmp, "one-deployment.rl.yaml")
	if err := os.WriteFile(rl, wrapResourceList(docs[:1]), 0o644); err != nil {
		return err
	}
	one := filepath.Join(e.tmp, "one-deployment.yaml")
	if err := os.WriteFile(one, docs[0], 0o644); err != nil {
		return err
	}
	specs := []cmdSpec{
		{Name: "inject-fn", Args: []string{e.fn}, Stdin: rl},
		{Name: "floor", Args: []string{e.floor}, Stdin: rl},
		{Name: "kyamlrt-rl", Args: []string{e.kyamlrt, "-rl"}, Stdin: rl},
		{Name: "kubectl-inject", Args: []string{e.plugin, "--local", "-f", one}},
		{Name: "kyamlrt-noop", Args: []string{e.kyamlrt, "-noop"}, Stdin: rl},
		{Name: "kinject-live", Args: []string{e.pluginLive, "--local", "-f", one}},
	}
	// one warm-up run each, not counted
	if _, err := measureAll(specs, 1, filepath.Join(e.tmp, "startup.out")); err != nil {
		return err
	}
	res, err := measureAll(specs, e.opts.startupRuns, filepath.Join(e.tmp, "startup.out"))
	if err != nil {
		return err
	}
	if _, err := runOnce(specs[0], filepath.Join(e.tmp, "startup-fn.out")); err != nil {
		return err
	}
	if got, _ := countEnvoy(filepath.Join(e.tmp, "startup-fn.out")); got != 1 {
		return fmt.Errorf("inject-fn on one Deployment: %d sidecars, want 1", got)
	}
	s := &startupResult{Runs: e.opts.startupRuns, Fn: res[0], Floor: res[1], KyamlRL: res[2], Plugin: res[3], KyamlNoop: res[4], PluginLive: res[5], PluginLiveSize: fileSize(e.pluginLive),
		FnSize: fileSize(e.fn), PluginSize: fileSize(e.plugin), FloorSize: fileSize(e.floor), KyamlRTSize: fileSize(e.kyamlrt)}
	out, err := exec.Command("go", "list", "-deps", "./fn/inject-fn").Output()
	if err != nil {
		return fmt.Errorf("go list -deps ./fn/inject-fn: %w", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "k8s.io/client-go") {
			s.ClientGoInFn++
		}
	}
	e.report.startup = s
	logf("startup: inject-fn %s %s | floor %s %s | kyaml RL %s", secs(s.Fn.Wall), mb(s.Fn.MaxRSS), secs(s.Floor.Wall), mb(s.Floor.MaxRSS), secs(s.KyamlRL.Wall))
	return nil
}
