package inject_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

const minimalConfig = `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: proxy}
spec:
  template:
    containers:
    - {name: proxy, image: example.com/proxy:v1}
`

// A configuration file's empty documents (nothing, or only a comment)
// are left out before its first document is read; a null one is not
// empty. A document that is not YAML is named by its index, from 0.
func TestParseConfigDocuments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, data, err string
	}{
		{"empty documents first", "---\n---\n# a comment\n---\n" + minimalConfig, ""},
		{"a null document first", "null\n---\n" + minimalConfig, "must be"},
		{"the first not YAML", "a: [\n", "template: not valid YAML: "},
		{"the third not YAML", minimalConfig + "---\nkind: ConfigMap\n---\na: [\n", "template: document 2: not valid YAML: "},
	} {
		_, err := inject.ParseConfig([]byte(c.data), nil)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.err)
		}
	}
}

// A template ConfigMap's key defaults to "config", the seed's.
func TestTemplateFromConfigMapDefaultKey(t *testing.T) {
	t.Parallel()
	cm := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tpl}\ndata:\n  config: |\n    containers:\n    - {name: proxy, image: example.com/proxy:v1}\n  other: |\n    containers:\n    - {name: other, image: example.com/other:v1}\n")
	for key, want := range map[string]string{"": "proxy", "config": "proxy", "other": "other"} {
		tmpl, err := inject.TemplateFromConfigMap(cm, key)
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		if got := strings.Join(tmpl.Names(), ","); got != want {
			t.Errorf("key %q: the template's container is %q, want %q", key, got, want)
		}
	}
}
