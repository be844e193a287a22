package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
)

// Part 8: what profiles and override annotations cost kubectl-inject
// --local, against plain injection of the same apps in the same run.

// overrideCase is one program of part 8; cases run round-robin.
type overrideCase struct {
	Name, What string
	// Input is the file the case reads; Prev, when set, names the case
	// whose output it reads instead (so it runs after it in each round).
	Input, Prev string
	Args        []string
	Runs        []run
	InputBytes  int64
}

// overridesRow is part 8 at one N.
type overridesRow struct {
	N     int
	Cases []*overrideCase
}

// agentProfile is the second profile of part 8: a secrets agent with its
// own volume and annotation, and an override of its own.
const agentProfile = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata:
  name: agent
spec:
  profile: agent
  template:
    containers:
    - name: secrets-agent
      image: hashicorp/vault:1.18
      args: [agent, -config=/etc/agent/agent.hcl]
      resources: {requests: {cpu: 10m, memory: 32Mi}}
      volumeMounts:
      - {name: agent-secrets, mountPath: /vault/secrets}
    volumes:
    - {name: agent-secrets, emptyDir: {medium: Memory}}
    metadata:
      annotations:
        agent.example.com/role: app
    parameters:
    - {annotation: role, field: "containers[secrets-agent].args[-role]", default: app}
`

// overrides is part 8.
func (e *env) overrides() error {
	agent := filepath.Join(e.tmp, "agent.yaml")
	if err := os.WriteFile(agent, []byte(agentProfile), 0o644); err != nil {
		return err
	}
	for _, n := range e.opts.ns {
		if n > 1000 && len(e.opts.ns) > 1 {
			continue // the ratio is the figure; the largest N adds little
		}
		plain, err := e.input(n)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(plain)
		if err != nil {
			return err
		}
		shared, distinct := filepath.Join(e.tmp, fmt.Sprintf("shared-%d.yaml", n)), filepath.Join(e.tmp, fmt.Sprintf("distinct-%d.yaml", n))
		if err := os.WriteFile(shared, gen.WithOverrides(src, false), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(distinct, gen.WithOverrides(src, true), 0o644); err != nil {
			return err
		}
		row := &overridesRow{N: n, Cases: []*overrideCase{
			{Name: "plain", What: "inject the default profile", Input: plain},
			{Name: "shared", What: "the same, every Deployment with 2 override annotations (one set of values)", Input: shared},
			{Name: "distinct", What: "the same, every Deployment with its own CPU request (a template per Deployment)", Input: distinct},
			{Name: "second", What: "a second profile (`--template agent.yaml`) onto the injected apps", Prev: "plain", Args: []string{"--template", agent}},
			{Name: "uninject-one", What: "`--uninject` of the default profile, the agent profile staying", Prev: "second", Args: []string{"--uninject"}},
			{Name: "uninject-all", What: "`--uninject --all-profiles` of the apps with both profiles", Prev: "second", Args: []string{"--uninject", "--all-profiles"}},
		}}
		out := func(name string) string { return e.outFile("overrides-"+name, n) }
		byName := map[string]*overrideCase{}
		specs := make([]cmdSpec, len(row.Cases))
		for i, c := range row.Cases {
			byName[c.Name] = c
			in := c.Input
			if c.Prev != "" {
				in = out(c.Prev)
			}
			specs[i] = cmdSpec{Name: c.Name, Args: append([]string{e.plugin, "--local", "-f", in}, c.Args...)}
		}
		// Round 0 warms up and is not counted.
		runs, err := measureRounds(specs, e.runsFor(n)+1, func(s cmdSpec) string { return out(s.Name) }, nil)
		if err != nil {
			return err
		}
		for i, c := range row.Cases {
			c.Runs = runs[i][1:]
			c.InputBytes = fileSize(specs[i].Args[3]) // Args[3]: the file after -f
		}
		if err := checkOverridesOutputs(n, src, out); err != nil {
			return err
		}
		e.report.overrides = append(e.report.overrides, row)
		p := median(byName["plain"].Runs)
		logf("overrides N=%d: plain %s | shared %s | distinct %s | second profile %s", n, secs(p.Wall),
			secs(median(byName["shared"].Runs).Wall), secs(median(byName["distinct"].Runs).Wall), secs(median(byName["second"].Runs).Wall))
	}
	return nil
}

// checkOverridesOutputs checks that every case did its work: n sidecars
// with the asked values, two profiles, and the round trips exact.
func checkOverridesOutputs(n int, plain []byte, out func(string) string) error {
	read := func(name string) ([]byte, error) { return os.ReadFile(out(name)) }
	for _, c := range []struct {
		name          string
		envoy, agent  int
		mustHold      string
		mustHoldCount int
	}{
		{"plain", n, 0, "", 0},
		{"shared", n, 0, "            cpu: 250m\n", n},
		// The record's values also hold the app port the default computes.
		{"distinct", n, 0, `"cpu-request":"`, n},
		{"second", n, n, "agent.sidecar.kinject.dev/status", n},
		{"uninject-one", 0, n, "agent.sidecar.kinject.dev/status", n},
	} {
		b, err := read(c.name)
		if err != nil {
			return err
		}
		envoy, agent := bytes.Count(b, []byte("image: envoyproxy/envoy:")), bytes.Count(b, []byte("image: hashicorp/vault:"))
		if envoy != c.envoy || agent != c.agent {
			return fmt.Errorf("overrides %s at N=%d: %d Envoy and %d agent sidecars, want %d and %d", c.name, n, envoy, agent, c.envoy, c.agent)
		}
		if got := bytes.Count(b, []byte(c.mustHold)); c.mustHold != "" && got != c.mustHoldCount {
			return fmt.Errorf("overrides %s at N=%d: %q %d times, want %d", c.name, n, c.mustHold, got, c.mustHoldCount)
		}
	}
	all, err := read("uninject-all")
	if err != nil {
		return err
	}
	if !bytes.Equal(all, plain) {
		return fmt.Errorf("overrides at N=%d: uninjecting every profile did not give the input back", n)
	}
	return nil
}
