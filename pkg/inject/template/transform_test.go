package template

import "testing"

// TestDerivedDefaults: in a template derived by settings (native or
// classic sidecars, an image), every parameter's default is the value its
// field holds in that template, so that the hash covers what is injected.
func TestDerivedDefaults(t *testing.T) {
	const src = `containers:
- name: proxy
  image: proxy:1
initContainers:
- name: agent
  image: agent:1
  restartPolicy: Always
parameters:
- {annotation: image, field: 'containers[proxy].image', type: image}
- {annotation: agent-image, field: 'containers[agent].image', type: image}
- {annotation: restart, field: 'containers[proxy].restartPolicy', default: Never}
`
	base := parseTemplate(t, src)
	for _, c := range []struct {
		name string
		tpl  *Template
		want map[string]string // annotation: default
	}{
		{"as parsed", base, map[string]string{"image": "proxy:1", "agent-image": "agent:1", "restart": "Never"}},
		{"native", base.WithNative(true), map[string]string{"image": "proxy:1", "agent-image": "agent:1", "restart": "Always"}},
		{"classic", base.WithNative(false), map[string]string{"image": "proxy:1", "agent-image": "agent:1", "restart": "Never"}},
		{"image", base.WithImage("mirror/proxy:2"), map[string]string{"image": "mirror/proxy:2", "agent-image": "agent:1", "restart": "Never"}},
		// The first sidecar is now the init container that was one already.
		{"native, then image", base.WithNative(true).WithImage("mirror/agent:2"), map[string]string{"image": "proxy:1", "agent-image": "mirror/agent:2", "restart": "Always"}},
	} {
		for _, p := range c.tpl.Parameters {
			field, _ := getPath(c.tpl.parameterItem(p.path), p.path.steps)
			if p.Default != field {
				t.Errorf("%s: %s: default %q, but its field holds %q", c.name, p.Annotation, p.Default, field)
			}
			if p.Default != c.want[p.Annotation] {
				t.Errorf("%s: %s: default %q, want %q", c.name, p.Annotation, p.Default, c.want[p.Annotation])
			}
		}
	}
	if base.Parameters[2].Default != "Never" {
		t.Errorf("deriving changed the template it started from: %q", base.Parameters[2].Default)
	}
}
