package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// celReport mirrors the JSON of hack/apiserver/celcost.
type celReport struct {
	CompatibilityVersion string `json:"compatibilityVersion"`
	PerCallLimit         int64  `json:"perCallLimit"`
	RuntimeBudget        int64  `json:"runtimeCELCostBudget"`
	MatchConditionBudget int64  `json:"runtimeCELCostBudgetMatchConditions"`
	TypedMethod          string `json:"typedMethod"`
	Pod                  string `json:"pod"`
	Expressions          []struct {
		Policy  string      `json:"policy"`
		Field   string      `json:"field"`
		Length  int         `json:"length"`
		Typed   celEstimate `json:"typed"`
		Dynamic celEstimate `json:"dynamic"`
		Runtime *struct {
			Cost  int64  `json:"cost"`
			Error string `json:"error"`
		} `json:"runtime"`
	} `json:"expressions"`
	Totals []struct {
		Policy string `json:"policy"`
		What   string `json:"what"`
		Cost   int64  `json:"cost"`
		Budget int64  `json:"budget"`
	} `json:"totals"`
	Elapsed time.Duration `json:"-"`
}

// maxRuntime is the dearest evaluation of one admission of the bench Pod.
func (c *celReport) maxRuntime() int64 {
	var m int64
	for _, x := range c.Totals {
		m = max(m, x.Cost)
	}
	return m
}

// celEstimate mirrors celcost's Estimate.
type celEstimate struct {
	Max       uint64 `json:"max"`
	Unbounded bool   `json:"unbounded"`
	Error     string `json:"error"`
}

// String is the estimated max with commas, "unbounded" or "error".
func (c celEstimate) String() string {
	if s, ok := c.unbounded("error"); ok {
		return s
	}
	return commas64(c.Max)
}

// share is the estimated max as a share of limit, "unbounded" or "-".
func (c celEstimate) share(limit int64) string {
	if s, ok := c.unbounded("-"); ok {
		return s
	}
	return pct(float64(c.Max) / float64(limit))
}

// unbounded is what a table shows for an estimate without a bounded max:
// onError for a failed estimate, "unbounded" for an unbounded one; ok is
// false for a bounded estimate.
func (c celEstimate) unbounded(onError string) (s string, ok bool) {
	switch {
	case c.Error != "":
		return onError, true
	case c.Unbounded:
		return "unbounded", true
	}
	return "", false
}

// pct formats a fraction, of either sign, as a percentage with enough
// digits to be read.
func pct(f float64) string {
	p := 100 * f
	switch a := math.Abs(p); {
	case p >= 100:
		return fmt.Sprintf("%s%%", commas64(uint64(p+0.5)))
	case a >= 1:
		return fmt.Sprintf("%.1f%%", p)
	case a >= 0.01:
		return fmt.Sprintf("%.2f%%", p)
	default:
		return fmt.Sprintf("%.4f%%", p)
	}
}

// celCost runs hack/apiserver/celcost (a package of the nested module that
// builds kube-apiserver, so that it compiles with the API server's own CEL
// environment) on the policy, with the bench Pod for the runtime costs.
func (e *env) celCost(policyYAML []byte) (*celReport, error) {
	policyFile := filepath.Join(e.tmp, "admission-policy.yaml")
	if err := os.WriteFile(policyFile, policyYAML, 0o644); err != nil {
		return nil, err
	}
	podYAML, err := yaml.Marshal(benchPod("bench", "web-0"))
	if err != nil {
		return nil, err
	}
	podFile := filepath.Join(e.tmp, "admission-pod.yaml")
	if err := os.WriteFile(podFile, podYAML, 0o644); err != nil {
		return nil, err
	}
	f, err := os.Open(policyFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// -trimpath and CGO_ENABLED=0 as hack/build-apiserver.sh: the packages
	// kube-apiserver's build compiled come from the build cache.
	cmd := exec.Command("go", "run", "-trimpath", "./celcost", "-json", "-pod", podFile)
	cmd.Dir = filepath.Join("hack", "apiserver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdin = f
	var stdout bytes.Buffer
	var stderr tailBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	logf("admission: go run ./celcost in hack/apiserver (the first build compiles the API server's packages)")
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("celcost: %v\n%s", err, stderr.String())
	}
	var rep celReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("celcost output: %w", err)
	}
	rep.Elapsed = time.Since(start)
	logf("admission: celcost: %d expressions in %s", len(rep.Expressions), rep.Elapsed.Round(100*time.Millisecond))
	return &rep, nil
}
