package processor

import (
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Processor is the KRM function: a ResourceListProcessor.
type Processor struct{}

var _ ResourceListProcessor = Processor{}

// Process applies every config of rl (one per profile, see LoadConfigs) to
// its items, in order, and appends one result per workload and profile.
// It returns the results as an error when any of them is an error; rl is
// complete either way.
func (Processor) Process(rl *ResourceList) error {
	lookup := ItemLookup(rl.Items)
	configs, errs := LoadConfigs(rl.FunctionConfig, rl.Items, lookup)
	if len(errs) > 0 {
		rl.Results = append(rl.Results, errs...)
		return failures(rl.Results)
	}
	policies, errs := compilePolicies(configs)
	if len(errs) > 0 {
		rl.Results = append(rl.Results, errs...)
		return failures(rl.Results)
	}
	named := nameProfiles(configs)
	// With several profiles an item is changed by all of them or by none:
	// when one fails on it, it goes out as it came (a copy is kept only
	// then, as a single profile leaves a failed object as it was anyway).
	var originals []*yaml.RNode
	if len(configs) > 1 {
		originals = make([]*yaml.RNode, len(rl.Items))
		for j, item := range rl.Items {
			originals[j] = item.Copy()
		}
	}
	failedBy := map[int]string{} // item -> the first profile that failed on it
	for i, cfg := range configs {
		prefix := profilePrefix(cfg, named)
		for _, w := range cfg.Injector.Template().Warnings() {
			rl.Results = append(rl.Results, &Result{Message: prefix + "template widens privileges: " + w, Severity: SeverityWarning})
		}
		if policies[i] != nil {
			if err := emitPolicy(rl, cfg, policies[i], prefix); err != nil {
				return err
			}
			continue
		}
		names := cfg.Injector.Template().Names()
		for j, item := range rl.Items {
			for _, e := range cfg.Injector.ProcessNode(cfg.Op, item, j) {
				if r := entryResult(e, item, names); r != nil {
					r.Message = prefix + r.Message
					rl.Results = append(rl.Results, r)
				}
				if _, seen := failedBy[j]; e.Action == inject.Failed && !seen {
					failedBy[j] = naming.ProfileName(cfg.Injector.Profile())
				}
			}
		}
	}
	if originals != nil {
		for j := range rl.Items {
			profile, failed := failedBy[j]
			if !failed || j >= len(originals) {
				continue
			}
			rl.Items[j] = originals[j]
			r := itemResult(originals[j], "left as it was: "+profile+" failed on it, so no profile's change is kept")
			rl.Results = append(rl.Results, r)
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
