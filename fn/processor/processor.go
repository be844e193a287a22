package processor

import (
	"errors"
	"fmt"
	"io"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceListKind is the kind of the KRM function's input and output.
const ResourceListKind = "ResourceList"

// Processor is the KRM function. It implements
// framework.ResourceListProcessor.
type Processor struct{}

var _ framework.ResourceListProcessor = Processor{}

// Process injects into the items of rl as its function config says, and
// appends one result per workload. It returns the results as an error
// when any of them is an error; rl is complete either way.
func (Processor) Process(rl *framework.ResourceList) error {
	lookup := ItemLookup(rl.Items)
	cfg, err := LoadConfig(rl.FunctionConfig, lookup)
	if err != nil {
		rl.Results = append(rl.Results, configResult(rl.FunctionConfig, err))
		return failures(rl.Results)
	}
	for _, w := range cfg.Injector.Template().Warnings() {
		rl.Results = append(rl.Results, &framework.Result{Message: "template widens privileges: " + w, Severity: framework.Warning})
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

// Run reads a ResourceList from r, processes it and writes the result to
// w. Results that came in are kept and the new ones are appended. When any
// new result is an error, Run returns it after writing the whole output.
func Run(p framework.ResourceListProcessor, r io.Reader, w io.Writer) error {
	rw := &kio.ByteReadWriter{Reader: r, Writer: w, KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		return fmt.Errorf("reading the ResourceList: %w", err)
	}
	if rw.WrappingKind != ResourceListKind {
		return fmt.Errorf("reading the ResourceList: input is not a %s (to edit YAML files, run inject-fn CONFIG.yaml FILE.yaml...)", ResourceListKind)
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	procErr := p.Process(rl)
	var results framework.Results
	if errors.As(procErr, &results) {
		procErr = results // reported below, after the output
	} else if procErr != nil {
		return procErr
	}
	if rw.Results, err = appendResults(rw.Results, rl.Results); err != nil {
		return err
	}
	if err := rw.Write(rl.Items); err != nil {
		return fmt.Errorf("writing the ResourceList: %w", err)
	}
	return procErr
}

// ItemLookup resolves template references against the ConfigMaps among
// items. A reference without a namespace matches a ConfigMap of that name
// in any namespace, as long as there is only one.
func ItemLookup(items []*yaml.RNode) inject.ConfigMapLookup {
	return func(namespace, name string) (*yaml.RNode, error) {
		var found []*yaml.RNode
		for _, item := range items {
			if kindOf(item) != "ConfigMap" || item.GetName() != name {
				continue
			}
			if namespace != "" && item.GetNamespace() != namespace {
				continue
			}
			found = append(found, item)
		}
		switch len(found) {
		case 0:
			return nil, nil
		case 1:
			return found[0], nil
		default:
			return nil, fmt.Errorf("%d ConfigMaps named %q in the input: name the namespace too (NAMESPACE/NAME)", len(found), name)
		}
	}
}

// failures returns the error results as an error, or nil.
func failures(results framework.Results) error {
	var errs framework.Results
	for _, r := range results {
		if r.Severity == framework.Error {
			errs = append(errs, r)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// appendResults adds results to the results node that came in, keeping
// the incoming ones as they were.
func appendResults(in *yaml.RNode, results framework.Results) (*yaml.RNode, error) {
	if len(results) == 0 {
		return in, nil
	}
	b, err := yaml.Marshal(results)
	if err != nil {
		return nil, fmt.Errorf("encoding results: %w", err)
	}
	out, err := yaml.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("encoding results: %w", err)
	}
	if in == nil || in.YNode().Kind != yaml.SequenceNode {
		return out, nil
	}
	in.YNode().Content = append(in.YNode().Content, out.YNode().Content...)
	return in, nil
}
