package inject

import (
	_ "embed"
	"fmt"
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
