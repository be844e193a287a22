package template

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestExpressionsShared: templates carrying the same expression text share
// one expression, prepared once; another text gets another.
func TestExpressionsShared(t *testing.T) {
	parse := func(expression string) *Template {
		t.Helper()
		src := "containers:\n- name: proxy\n  image: proxy:1\n  env:\n  - name: APP_PORT\n    value: \"8080\"\n" +
			"parameters:\n- annotation: app-port\n  field: containers[proxy].env[APP_PORT].value\n  type: port\n  expression: " + expression + "\n"
		return parseTemplate(t, src)
	}
	a, b, other := parse("'8081'"), parse("'8081'"), parse("'8082'")
	if a.Parameters[0].expr == nil || a.Parameters[0].expr != b.Parameters[0].expr {
		t.Error("two parses of one expression hold two expressions")
	}
	if other.Parameters[0].expr == a.Parameters[0].expr {
		t.Error("two expressions share one")
	}
}

// parseTemplate parses a template's YAML as ParsePartialSpec reads it.
func parseTemplate(t *testing.T, src string) *Template {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	tpl, err := ParsePartialSpec(&doc, "")
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}
