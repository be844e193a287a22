package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// liveRow is one N of part 4.
type liveRow struct {
	N           int
	Plugin      time.Duration
	PluginReq   requests
	PluginLines map[string]int // action -> objects
	Second      time.Duration
	SecondReq   requests
	SecondLines map[string]int
	Loop        time.Duration // for LoopN objects
	LoopN       int
	LoopReq     requests
	Created     time.Duration
	// The same first run on other fresh Deployments with kubectl's
	// discovery limits (conservativeRateFlags), for comparison.
	Conservative      time.Duration
	ConservativeReq   requests
	ConservativeLines map[string]int
}

// The plugin's main live runs use its default client rate limits (no
// flags); a run with kubectl's discovery limits is measured beside them.
var conservativeRateFlags = []string{"--qps", "50", "--burst", "300"}

// LoopFull is the loop's time for N objects (extrapolated linearly when
// only a sample was patched).
func (r liveRow) LoopFull() time.Duration {
	return time.Duration(float64(r.Loop) * float64(r.N) / float64(r.LoopN))
}

// patchLoopScript is the alternative to kubectl-inject deploy --all: a
// bash loop of kubectl patch, one process per Deployment.
const patchLoopScript = `#!/bin/bash
# usage: patch-loop.sh KUBECONFIG NAMESPACE PATCH NAME...
set -e
kc=$1 ns=$2 p=$3
shift 3
for d in "$@"; do
  kubectl --kubeconfig "$kc" -n "$ns" patch deployment "$d" --type strategic -p "$p" >/dev/null
done
`

// live is part 4: for every N, kubectl-inject deploy --all on N fresh
// Deployments (twice, and once more with conservativeRateFlags on others)
// against the patch loop on a sample of them, with the requests each sent.
func (e *env) live() error {
	c, _, cs, err := startCluster("live")
	if err != nil {
		return err
	}
	defer c.Stop()
	tmpl, err := deploymentTemplate()
	if err != nil {
		return err
	}
	patch, err := jsonPatch()
	if err != nil {
		return err
	}
	kubectl, err := testbin.FindTool("kubectl")
	if err != nil {
		return err
	}
	e.report.kubectlVersion = kubectlVersion(kubectl)
	// Warm kubectl's discovery cache so the loop's first call is not special.
	if out, err := exec.Command(kubectl, "--kubeconfig", c.AdminKubeconfig, "get", "deployments", "-A").CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl get: %v\n%s", err, out)
	}
	script := filepath.Join(e.tmp, "patch-loop.sh")
	if err := os.WriteFile(script, []byte(patchLoopScript), 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	for _, n := range e.opts.liveNs {
		row := liveRow{N: n, LoopN: min(n, e.opts.loopSample)}
		ns, loopNs, defNs := fmt.Sprintf("bench-%d", n), fmt.Sprintf("loop-%d", n), fmt.Sprintf("default-%d", n)
		t := time.Now()
		for _, x := range []struct {
			ns string
			n  int
		}{{ns, n}, {loopNs, row.LoopN}, {defNs, n}} {
			if err := createDeployments(ctx, cs, tmpl, x.ns, x.n); err != nil {
				return err
			}
		}
		row.Created = time.Since(t)
		logf("live N=%d: created %d + %d + %d Deployments in %s", n, n, row.LoopN, n, row.Created.Round(100*time.Millisecond))

		pluginRun := func(ns string, flags ...string) (time.Duration, requests, map[string]int, error) {
			var d time.Duration
			var stderr string
			req, err := countRequests(ctx, cs, func() (err error) {
				d, stderr, err = deployAll(e.plugin, c.AdminKubeconfig, ns, flags...)
				return err
			})
			if err != nil {
				return 0, requests{}, nil, err
			}
			return d, req, actions(stderr), nil
		}
		if row.Plugin, row.PluginReq, row.PluginLines, err = pluginRun(ns); err != nil {
			return err
		}
		logf("live N=%d: kubectl-inject: %s, requests %v, %v", n, secs(row.Plugin), row.PluginReq, row.PluginLines)
		if row.Second, row.SecondReq, row.SecondLines, err = pluginRun(ns); err != nil {
			return err
		}
		logf("live N=%d: second run %s, requests %v, %v", n, secs(row.Second), row.SecondReq, row.SecondLines)
		if row.Conservative, row.ConservativeReq, row.ConservativeLines, err = pluginRun(defNs, conservativeRateFlags...); err != nil {
			return err
		}
		logf("live N=%d: kubectl-inject %s: %s, requests %v, %v", n, strings.Join(conservativeRateFlags, " "), secs(row.Conservative), row.ConservativeReq, row.ConservativeLines)
		for _, x := range []string{ns, defNs} {
			if got, err := countInjected(ctx, cs, x); err != nil {
				return err
			} else if got != n {
				return fmt.Errorf("live N=%d: %d Deployments in %s have the envoy container, want %d", n, got, x, n)
			}
		}

		args := []string{script, c.AdminKubeconfig, loopNs, patch}
		for i := 0; i < row.LoopN; i++ {
			args = append(args, fmt.Sprintf("app-%d", i))
		}
		row.LoopReq, err = countRequests(ctx, cs, func() error {
			cmd := exec.Command("bash", args...)
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("kubectl patch loop: %v\n%s", err, tailLines(stderr.String(), 20))
			}
			row.Loop = time.Since(start)
			return nil
		})
		if err != nil {
			return err
		}
		if got, err := countInjected(ctx, cs, loopNs); err != nil {
			return err
		} else if got != row.LoopN {
			return fmt.Errorf("kubectl patch loop: %d Deployments have the envoy container, want %d", got, row.LoopN)
		}
		logf("live N=%d: kubectl patch loop over %d: %s (N: %s), requests %v", n, row.LoopN, secs(row.Loop), secs(row.LoopFull()), row.LoopReq)
		e.report.live = append(e.report.live, row)
	}
	return nil
}

// actions counts the plugin's result lines by action
// ("deployment.apps/app-0 injected" -> injected).
func actions(stderr string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(stderr, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.Contains(f[0], "/") {
			m[strings.TrimSuffix(f[1], ":")]++
		}
	}
	return m
}
