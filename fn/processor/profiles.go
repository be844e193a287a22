package processor

import (
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// LoadConfigs reads every config a run applies, in the order it applies
// them (see configDocuments): one per profile. A config that cannot be
// used, a profile configured twice, and an allProfiles uninject beside
// other configs each give an error result naming the config; the run then
// changes nothing.
func LoadConfigs(fc *yaml.RNode, items []*yaml.RNode, lookup inject.ConfigMapLookup) ([]*config.Function, Results) {
	var (
		configs []*config.Function
		errs    Results
	)
	for _, doc := range configDocuments(fc, items) {
		cfg, err := config.LoadFunction(doc, lookup)
		if err != nil {
			errs = append(errs, configResult(doc, err))
			continue
		}
		configs = append(configs, cfg)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return configs, checkProfiles(configs)
}

// configDocuments picks the documents that configure a run. A function
// config that is not among the items (kustomize's transformer config, kpt
// fn eval --fn-config or -- key=value) is the only one: it says what this
// run does, even when the items carry SidecarInjections of their own (so
// that `uninject=true allProfiles=true` removes them all rather than
// re-injecting them). Otherwise, that is with no function config, an empty
// one (what kpt fn eval sends without arguments) or one that is also an
// item (what kpt fn render sends for configPath), the SidecarInjections
// among the items are the configs, in the order of the items; with none,
// the function config (or the embedded default) is.
func configDocuments(fc *yaml.RNode, items []*yaml.RNode) []*yaml.RNode {
	if !emptyConfig(fc) && !(isSidecarInjection(fc) && indexOfObject(items, fc) >= 0) {
		return []*yaml.RNode{fc}
	}
	var docs []*yaml.RNode
	for _, item := range items {
		if !isSidecarInjection(item) {
			continue
		}
		if isSidecarInjection(fc) && indexOfObject([]*yaml.RNode{item}, fc) == 0 {
			item = fc // the same object; what the run was given wins
		}
		docs = append(docs, item)
	}
	if len(docs) == 0 {
		return []*yaml.RNode{fc}
	}
	return docs
}

// emptyConfig reports whether a function config sets nothing: absent, or
// a ConfigMap without data.
func emptyConfig(fc *yaml.RNode) bool {
	if fc == nil || fc.IsNilOrEmpty() {
		return true
	}
	if inject.ObjectKind(fc) != "ConfigMap" {
		return false
	}
	data := fc.Field("data")
	return data == nil || data.Value.IsNilOrEmpty() || (data.Value.YNode().Kind == yaml.MappingNode && len(data.Value.YNode().Content) == 0)
}

// isSidecarInjection reports whether n is a SidecarInjection of the
// kinject.dev group (any version, so that a wrong one gets a clear error
// rather than being taken for an ordinary resource).
func isSidecarInjection(n *yaml.RNode) bool {
	return inject.ObjectKind(n) == inject.ConfigKind &&
		strings.HasPrefix(n.GetApiVersion(), strings.SplitN(inject.ConfigAPIVersion, "/", 2)[0]+"/")
}

// indexOfObject finds the item with n's apiVersion, kind, namespace and
// name.
func indexOfObject(items []*yaml.RNode, n *yaml.RNode) int {
	for i, it := range items {
		if inject.ObjectKind(it) != "" && it.GetApiVersion() == n.GetApiVersion() && it.GetKind() == n.GetKind() &&
			it.GetNamespace() == n.GetNamespace() && it.GetName() == n.GetName() {
			return i
		}
	}
	return -1
}

// checkProfiles refuses a profile configured twice, since the second
// config would undo or fight the first on every run, and an allProfiles
// uninject beside other configs, since it removes what they inject.
func checkProfiles(configs []*config.Function) Results {
	var errs Results
	seen := map[string]*config.Function{}
	for _, cfg := range configs {
		profile := cfg.Injector.Profile()
		if first, ok := seen[profile]; ok {
			label := profileLabel(profile)
			if profile == "" {
				label = "the " + label
			}
			r := configResult(cfg.Source, &config.FunctionError{Field: "spec.profile", Err: fmt.Errorf("%s is configured by both %s and %s: configure each profile once",
				label, describeConfig(first), describeConfig(cfg))})
			errs = append(errs, r)
			continue
		}
		seen[profile] = cfg
	}
	if len(configs) > 1 {
		for _, cfg := range configs {
			if cfg.Op == inject.OpUninjectAll {
				errs = append(errs, configResult(cfg.Source, &config.FunctionError{Field: "spec.allProfiles", Err: fmt.Errorf("%s removes every profile's injection: it cannot run beside %s",
					describeConfig(cfg), describeOthers(configs, cfg))}))
			}
		}
	}
	return errs
}

// nameProfiles reports whether results must name the profile: when there
// are several, or the only one is not the default profile.
func nameProfiles(configs []*config.Function) bool {
	if len(configs) != 1 {
		return true
	}
	cfg := configs[0]
	return cfg.Injector.Profile() != "" || (cfg.Op == inject.OpUninjectAll)
}

// profilePrefix starts the messages about cfg's profile: `profile "mesh": `,
// `all profiles: ` for an allProfiles uninject, or nothing when named is
// false.
func profilePrefix(cfg *config.Function, named bool) string {
	switch {
	case !named:
		return ""
	case cfg.Op == inject.OpUninjectAll:
		return "all profiles: "
	}
	return profileLabel(cfg.Injector.Profile()) + ": "
}

// profileLabel names a profile in results: `profile "mesh"`, or the
// default profile.
func profileLabel(profile string) string {
	if profile == "" {
		return "default profile"
	}
	return fmt.Sprintf("profile %q", profile)
}

// describeConfig names a config and the file it came from:
// `SidecarInjection "mesh" (mesh.yaml)`.
func describeConfig(cfg *config.Function) string {
	if cfg.Source == nil || inject.ObjectKind(cfg.Source) == "" {
		return "the embedded default"
	}
	s := fmt.Sprintf("%s %q", cfg.Source.GetKind(), cfg.Source.GetName())
	if f := fileOf(cfg.Source); f != nil {
		s += " (" + f.Path + ")"
	}
	return s
}

func describeOthers(configs []*config.Function, except *config.Function) string {
	var names []string
	for _, c := range configs {
		if c != except {
			names = append(names, describeConfig(c))
		}
	}
	return strings.Join(names, ", ")
}
