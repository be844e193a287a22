package admission

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// InstalledConfig reads what an installed mutating policy was compiled
// from, out of its annotations (ConfigAnnotation), and checks it against
// the template hash the policy stamps on its records: a configuration that
// does not give that hash (edited by hand) is an error, never a guess. It
// returns nil, nil for a policy that carries no configuration (compiled by
// a version before it did).
func InstalledConfig(name string, annotations map[string]string) (*inject.Config, error) {
	doc, ok := annotations[ConfigAnnotation]
	if !ok {
		return nil, nil
	}
	cfg, err := inject.ParseConfig([]byte(doc), nil)
	if err != nil {
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q]: %w", name, ConfigAnnotation, err)
	}
	if cfg.Template == nil {
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q]: spec.template: is missing", name, ConfigAnnotation)
	}
	in, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q]: %w", name, ConfigAnnotation, err)
	}
	if want := annotations[TemplateHashAnnotation]; in.TemplateHash() != want {
		return nil, fmt.Errorf("mutatingadmissionpolicy/%s: metadata.annotations[%q] gives template %s, but the policy injects template %s (%s): the annotation was changed; apply the policy again with kubectl inject policy --apply",
			name, ConfigAnnotation, in.TemplateHash(), want, TemplateHashAnnotation)
	}
	return cfg, nil
}
