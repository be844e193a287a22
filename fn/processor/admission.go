package processor

import (
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// compilePolicies compiles the admission policy of every config that asks
// for one (nil for the others), before anything is emitted, so that a
// config that cannot be compiled, or two profiles whose policy objects
// would have the same name, change nothing.
func compilePolicies(configs []*config.Function) ([]*admission.Policy, Results) {
	policies := make([]*admission.Policy, len(configs))
	var errs Results
	owners := map[string]*config.Function{}
	for i, cfg := range configs {
		if !cfg.AdmissionPolicy {
			continue
		}
		compile := admission.Compile
		if cfg.StaticPolicy {
			compile = admission.CompileStatic
		}
		p, err := compile(cfg.Injector, cfg.PolicyName)
		if err != nil {
			errs = append(errs, configResult(cfg.Source, err))
			continue
		}
		if name, first := collision(owners, cfg, p.Name, p.ConflictName); first != nil {
			errs = append(errs, configResult(cfg.Source, &config.FunctionError{Field: "metadata.name", Err: fmt.Errorf(
				"admission policy %s: %s and %s would both write it: rename one of them", name, describeConfig(first), describeConfig(cfg))}))
			continue
		}
		policies[i] = p
	}
	return policies, errs
}

// collision claims names for cfg in owners, or returns the first name
// another config already owns, and that config.
func collision(owners map[string]*config.Function, cfg *config.Function, names ...string) (string, *config.Function) {
	for _, name := range names {
		if first, ok := owners[name]; ok {
			return name, first
		}
	}
	for _, name := range names {
		owners[name] = cfg
	}
	return "", nil
}

// emitPolicy adds the admission policy objects to rl instead of injecting
// its items, which pass through untouched: the API server then injects the
// Pods they create, and the workloads in git never drift. Objects of the
// same kind and name already among the items (an earlier run of a kpt
// pipeline) are replaced in place, keeping their file; new ones go to
// kinject-NAME.yaml, or for the static form each to its own file, as the
// API server reads them (mutating/kinject-NAME.policy.yaml, ...). prefix
// starts every result's message.
func emitPolicy(rl *ResourceList, cfg *config.Function, p *admission.Policy, prefix string) error {
	nodes, err := p.Nodes()
	if err != nil {
		return err
	}
	files := make([]string, len(nodes))
	for i := range files {
		files[i] = p.Name + ".yaml"
	}
	if p.Static {
		// The files kubectl inject policy --static writes, their heading
		// comments included (the function does not link the API server's
		// loader to validate them: the plugin's validation of the same
		// compiler's output is tested to pass for every config).
		static, err := p.StaticFiles()
		if err != nil {
			return err
		}
		for i, f := range static {
			files[i] = f.Path
			if nodes[i], err = yaml.Parse(string(f.Data)); err != nil {
				return fmt.Errorf("encoding the policy: %w", err)
			}
		}
	}
	for i, n := range nodes {
		file := files[i]
		index := i
		if p.Static {
			index = 0 // one object per file
		}
		verb := "added"
		if j := indexOf(rl.Items, n); j >= 0 {
			if err := copyPathAnnotations(rl.Items[j], n); err != nil {
				return err
			}
			rl.Items[j], verb = n, "updated"
		} else {
			for _, a := range [][2]string{{kioutil.PathAnnotation, file}, {kioutil.IndexAnnotation, fmt.Sprint(index)}} {
				if err := n.PipeE(yaml.SetAnnotation(a[0], a[1])); err != nil {
					return fmt.Errorf("annotating %s: %w", n.GetName(), err)
				}
			}
			rl.Items = append(rl.Items, n)
		}
		rl.Results = append(rl.Results, &Result{
			Message:     fmt.Sprintf("%sadmission policy object %s (template %s)", prefix, verb, cfg.Injector.TemplateHash()),
			Severity:    SeverityInfo,
			ResourceRef: &ResourceRef{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Name: n.GetName()},
			File:        fileOf(n),
		})
	}
	return nil
}

// indexOf finds the item with n's apiVersion, kind and name.
func indexOf(items []*yaml.RNode, n *yaml.RNode) int {
	for i, it := range items {
		if inject.ObjectKind(it) != "" && it.GetApiVersion() == n.GetApiVersion() && it.GetKind() == n.GetKind() && it.GetName() == n.GetName() {
			return i
		}
	}
	return -1
}

// copyPathAnnotations gives to the object that replaces from the file
// annotations of from, in a fixed order so that runs agree.
func copyPathAnnotations(from, to *yaml.RNode) error {
	annotations := from.GetAnnotations()
	for _, k := range []string{
		kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.IdAnnotation,
		kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation,
		"kustomize.config.k8s.io/id",
	} {
		if v, ok := annotations[k]; ok {
			if err := to.PipeE(yaml.SetAnnotation(k, v)); err != nil {
				return err
			}
		}
	}
	return nil
}
