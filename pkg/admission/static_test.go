package admission_test

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

func injectorOf(t *testing.T, tpl string) *inject.Injector {
	t.Helper()
	tmpl, err := inject.ParseTemplate([]byte(tpl))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tmpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// A template that needs an object of the Pod's namespace has no static
// form: the error says why and names the template's field. One that needs
// none has both forms.
func TestStaticRefusesGate(t *testing.T) {
	t.Parallel()
	gated := injectorOf(t, `containers:
- name: agent
  image: agent:1
  volumeMounts: [{name: conf, mountPath: /etc/agent}]
volumes:
- name: conf
  configMap: {name: agent-conf}
`)
	if _, err := admission.Compile(gated, ""); err != nil {
		t.Fatalf("the API form: %v", err)
	}
	_, err := admission.CompileStatic(gated, "")
	if err == nil || !strings.Contains(err.Error(), "configmap/agent-conf") || !strings.Contains(err.Error(), "volumes[conf]") || !strings.Contains(err.Error(), "paramRef") {
		t.Fatalf("CompileStatic: %v; want a refusal naming configmap/agent-conf, its field and paramRef", err)
	}
	free := injectorOf(t, "containers:\n- {name: agent, image: agent:1}\n")
	p, err := admission.CompileStatic(free, "")
	if err != nil {
		t.Fatalf("CompileStatic without an object to need: %v", err)
	}
	if p.Requires != nil || p.Name != "kinject-envoy"+admission.StaticSuffix {
		t.Errorf("static policy %s needs %v, want kinject-envoy%s needing nothing", p.Name, p.Requires, admission.StaticSuffix)
	}
}

// A parameter may set a flag written --flag=value as the first word of
// the arguments.
func TestFlagParameterInFirstWord(t *testing.T) {
	t.Parallel()
	in := injectorOf(t, `containers:
- name: agent
  image: agent:1
  args: ["--level=info", "--port", "80"]
parameters:
- {annotation: level, field: "containers[agent].args[--level]", type: string}
- {annotation: port, field: "containers[agent].args[--port]", type: port}
`)
	if _, err := admission.Compile(in, ""); err != nil {
		t.Fatal(err)
	}
}
