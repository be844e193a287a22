package admission

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// InstalledConfig reads what an installed mutating policy was compiled
// from, out of its annotations (ConfigAnnotation), and checks it against
// the template hash the policy stamps on its records: a configuration that
// does not give that hash (edited by hand) is an error, never a guess. A
// configuration without a template names a built-in default: the one
// (this version's or an earlier one's) that gives the hash. It returns
// nil, nil for a policy that carries no configuration (compiled by a
// version before it did).
func InstalledConfig(name string, annotations map[string]string) (*inject.Config, error) {
	doc, ok := annotations[ConfigAnnotation]
	if !ok {
		return nil, nil
	}
	cfg, err := inject.ParseConfig([]byte(doc), nil)
	if err != nil {
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q]: %w", name, ConfigAnnotation, err)
	}
	want := annotations[TemplateHashAnnotation]
	named := cfg.Template == nil // a built-in default, named by the hash
	if named {
		// BuiltinTemplate checked the hash of the one it finds.
		if cfg.Template = inject.BuiltinTemplate(want, cfg.Settings); cfg.Template != nil {
			return cfg, nil
		}
		cfg.Template = inject.DefaultTemplate() // to say which template the annotation gives
	}
	in, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q]: %w", name, ConfigAnnotation, err)
	}
	if in.TemplateHash() != want {
		why := "the annotation was changed"
		if named {
			why += ", or a newer kubectl-inject compiled the policy from its own default"
		}
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q] gives template %s, but the policy injects template %s (%s): %s; apply the policy again with kubectl inject policy --apply",
			name, ConfigAnnotation, in.TemplateHash(), want, TemplateHashAnnotation, why)
	}
	return cfg, nil
}
