package inject

import (
	_ "embed"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

//go:embed default_template.yaml
var defaultTemplateYAML string

// DefaultTemplateYAML returns the text of the embedded default template.
func DefaultTemplateYAML() string { return defaultTemplateYAML }

// DefaultTemplate returns the embedded default template: the seed's Envoy
// sidecar with a pinned envoyproxy/envoy image and listener port 10000.
func DefaultTemplate() *Template {
	t, err := ParseTemplate([]byte(defaultTemplateYAML))
	if err != nil {
		panic(fmt.Sprintf("embedded default template: %v", err)) // covered by tests
	}
	t.Source = "embedded default template"
	return t
}

// ParseTemplate reads a template from YAML text in any supported format
// (a SidecarInjection with an inline template, a template ConfigMap, or a
// partial Pod spec). References to other ConfigMaps are not resolved here;
// use LoadConfig for that.
func ParseTemplate(data []byte) (*Template, error) {
	cfg, err := ParseConfig(data, nil)
	if err != nil {
		return nil, err
	}
	if cfg.Template == nil {
		return nil, fmt.Errorf("template: no template given")
	}
	return cfg.Template, nil
}

// ParseConfig reads a configuration document from YAML text; see LoadConfig.
func ParseConfig(data []byte, lookup ConfigMapLookup) (*Config, error) {
	node, err := decodeDocument(data)
	if err != nil {
		return nil, fmt.Errorf("template: not valid YAML: %w", err)
	}
	if node == nil {
		return nil, fmt.Errorf("template: empty document")
	}
	return LoadConfig(yaml.NewRNode(node), lookup)
}
