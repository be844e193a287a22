package processor

import (
	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Processor is the KRM function: a ResourceListProcessor.
type Processor struct{}

var _ ResourceListProcessor = Processor{}

// Process injects into the items of rl as its function config says, and
// appends one result per workload. It returns the results as an error
// when any of them is an error; rl is complete either way.
func (Processor) Process(rl *ResourceList) error {
	lookup := ItemLookup(rl.Items)
	cfg, err := LoadConfig(rl.FunctionConfig, lookup)
	if err != nil {
		rl.Results = append(rl.Results, configResult(rl.FunctionConfig, err))
		return failures(rl.Results)
	}
	for _, w := range cfg.Injector.Template().Warnings() {
		rl.Results = append(rl.Results, &Result{Message: "template widens privileges: " + w, Severity: SeverityWarning})
	}
	if cfg.AdmissionPolicy {
		return emitPolicy(rl, cfg)
	}
	names := cfg.Injector.Template().Names()
	for i, item := range rl.Items {
		for _, e := range cfg.Injector.ProcessNode(cfg.Op, item, i) {
			if r := entryResult(e, item, names); r != nil {
				rl.Results = append(rl.Results, r)
			}
		}
	}
	return failures(rl.Results)
}

// ItemLookup resolves template references against the ConfigMaps among
// items (see inject.DocumentLookup).
func ItemLookup(items []*yaml.RNode) inject.ConfigMapLookup {
	return inject.DocumentLookup(items, nil)
}

// failures returns the error results as an error, or nil.
func failures(results Results) error {
	var errs Results
	for _, r := range results {
		if r.Severity == SeverityError {
			errs = append(errs, r)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
