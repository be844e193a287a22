package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// kustomizeRow is one N of part 2.
type kustomizeRow struct {
	N        int
	Runs     int
	Patch    sample // kustomize build with a patches: entry
	Exec     sample // kustomize build with inject-fn as an exec function
	Noop     sample // kustomize build with a no-op exec function (kyamlrt -rl)
	HaveNoop bool
	CLI      sample // kubectl-inject --local on the same stream (part 1), if measured
	HaveCLI  bool
}

// templateSpec returns the embedded default template as a partial Pod spec
// (containers and volumes), the same sidecar every part injects.
func templateSpec() (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(inject.DefaultTemplateYAML()), &m); err != nil {
		return nil, fmt.Errorf("default template: %w", err)
	}
	return m, nil
}

// smpPatch is the strategic merge patch a user would write by hand: the
// default template's containers and volumes under spec.template.spec.
func smpPatch() (string, error) {
	m, err := templateSpec()
	if err != nil {
		return "", err
	}
	p := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "any"},
		"spec":       map[string]any{"template": map[string]any{"spec": m}},
	}
	b, err := yaml.Marshal(p)
	return string(b), err
}

// jsonPatch is the same patch as JSON, for kubectl patch -p.
func jsonPatch() (string, error) {
	m, err := templateSpec()
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": m}}})
	return string(b), err
}

// kustomize is part 2: kustomize build with a hand-written patch against
// kustomize build with inject-fn as an exec function (and a no-op one).
func (e *env) kustomize() error {
	kz, err := testbin.FindTool("kustomize")
	if err != nil {
		return err
	}
	ver, _ := exec.Command(kz, "version").Output()
	e.report.kustomizeVersion = strings.TrimSpace(string(ver))
	patch, err := smpPatch()
	if err != nil {
		return err
	}
	for _, n := range e.opts.kustomizeNs {
		in, err := e.input(n)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		patchDir := filepath.Join(e.tmp, fmt.Sprintf("kz-patch-%d", n))
		execDir := filepath.Join(e.tmp, fmt.Sprintf("kz-exec-%d", n))
		noopDir := filepath.Join(e.tmp, fmt.Sprintf("kz-noop-%d", n))
		noopScript := filepath.Join(e.tmp, "noop-fn.sh")
		files := map[string]string{
			noopScript:                          "#!/bin/sh\nexec " + e.kyamlrt + " -rl\n",
			filepath.Join(noopDir, "apps.yaml"): string(src),
			filepath.Join(noopDir, "kustomization.yaml"): "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
				"resources:\n- apps.yaml\ntransformers:\n- noop.yaml\n",
			filepath.Join(noopDir, "noop.yaml"): "apiVersion: bench.kinject.dev/v1\nkind: NoOp\nmetadata:\n  name: noop\n" +
				"  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + noopScript + "\n",
			filepath.Join(patchDir, "apps.yaml"): string(src),
			filepath.Join(patchDir, "kustomization.yaml"): "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
				"resources:\n- apps.yaml\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n" + indent(patch, "    "),
			filepath.Join(execDir, "apps.yaml"): string(src),
			filepath.Join(execDir, "kustomization.yaml"): "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n" +
				"resources:\n- apps.yaml\ntransformers:\n- inject.yaml\n",
			filepath.Join(execDir, "inject.yaml"): "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata:\n  name: envoy\n" +
				"  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + e.fn + "\nspec:\n  mode: opt-out\n",
		}
		for p, c := range files {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
				return err
			}
		}
		specs := []cmdSpec{
			{Name: "kustomize-patch", Args: []string{kz, "build", patchDir}},
			{Name: "kustomize-exec", Args: []string{kz, "build", "--enable-alpha-plugins", "--enable-exec", execDir}},
		}
		withNoop := n <= e.opts.kustomizeNoopMax
		if withNoop {
			specs = append(specs, cmdSpec{Name: "kustomize-noop", Args: []string{kz, "build", "--enable-alpha-plugins", "--enable-exec", noopDir}})
		}
		runs := e.opts.smallRuns
		if n >= 1000 {
			runs = e.opts.kustomizeBig
		}
		res, err := measureRounds(specs, runs, func(s cmdSpec) string { return e.outFile(s.Name, n) }, func(s cmdSpec, r run) {
			logf("kustomize N=%d %s: %s %s", n, s.Name, secs(r.Wall), mb(r.MaxRSS))
		})
		if err != nil {
			return err
		}
		for _, s := range specs[:2] {
			got, err := countEnvoy(e.outFile(s.Name, n))
			if err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("%s at N=%d: %d sidecars in the output, want %d", s.Name, n, got, n)
			}
		}
		row := kustomizeRow{N: n, Runs: runs, Patch: median(res[0]), Exec: median(res[1]), HaveNoop: withNoop}
		if withNoop {
			if sz := fileSize(e.outFile("kustomize-noop", n)); sz < fileSize(in)/2 {
				return fmt.Errorf("kustomize with the no-op function at N=%d wrote only %d bytes", n, sz)
			}
			row.Noop = median(res[2])
		}
		row.CLI, row.HaveCLI = e.coreCLI[n]
		e.report.kustomize = append(e.report.kustomize, row)
	}
	return nil
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
