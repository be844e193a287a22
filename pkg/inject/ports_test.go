package inject_test

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// appPod is a Deployment whose app declares ports and whose pod template
// carries annotations (each "key: value").
func appPod(ports []string, annotations ...string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n")
	if len(annotations) > 0 {
		b.WriteString("    metadata:\n      annotations:\n")
		for _, a := range annotations {
			b.WriteString("        " + a + "\n")
		}
	}
	b.WriteString("    spec:\n      containers:\n      - name: app\n        image: busybox\n")
	if len(ports) > 0 {
		b.WriteString("        ports:\n")
		for _, p := range ports {
			b.WriteString("        - containerPort: " + p + "\n")
		}
	}
	return []byte(b.String())
}

// TestSidecarPortsRefused: an app on any port the default sidecar binds,
// declared (10000, 9902) or reserved (Envoy's admin API, 9901), is refused
// with a line naming both containers; so is an app-port override naming
// one. The messages are written here, not in a golden.
func TestSidecarPortsRefused(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		input []byte
		want  string // "" for injected
	}{
		{"admin", appPod([]string{"9901"}),
			`conflict: spec.template.spec.containers: sidecar "envoy" binds port 9901 (Envoy's admin API on 127.0.0.1), which container "app" already uses`},
		{"proxy", appPod([]string{"10000"}),
			`conflict: spec.template.spec.containers: sidecar "envoy" port 10000 is already used by container "app"`},
		{"stats", appPod([]string{"9902"}),
			`conflict: spec.template.spec.containers: sidecar "envoy" port 9902 is already used by container "app"`},
		{"admin second", appPod([]string{"8080", "9901"}),
			`sidecar "envoy" binds port 9901 (Envoy's admin API on 127.0.0.1), which container "app" already uses`},
		{"override admin", appPod(nil, `sidecar.kinject.dev/app-port: "9901"`),
			`spec.template.metadata.annotations["sidecar.kinject.dev/app-port"]: "9901" is a port of sidecar "envoy" (Envoy's admin API on 127.0.0.1), not the app's`},
		{"override proxy", appPod(nil, `sidecar.kinject.dev/app-port: "10000"`),
			`"10000" is a port of sidecar "envoy" (containerPort envoy-proxy), not the app's`},
		{"override out of range", appPod(nil, `sidecar.kinject.dev/app-port: "70000"`),
			`"70000" is not a port number from 1 to 65535`},
		{"app on 8080", appPod([]string{"8080"}), ""},
		{"override 3000", appPod(nil, `sidecar.kinject.dev/app-port: "3000"`), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, report := run(t, in, inject.OpInject, c.input)
			if c.want == "" {
				if report.Failed() || !report.Changed() {
					t.Fatalf("not injected: %s", reportText(report))
				}
				return
			}
			if !report.Failed() || !strings.Contains(reportText(report), c.want) {
				t.Errorf("report:\n%s\nwant a failure containing %s", reportText(report), c.want)
			}
			if string(out) != string(c.input) {
				t.Errorf("a refused object changed:\n%s", out)
			}
		})
	}
}

// TestReservedPortIsWhatRefuses: without its reservedPorts entry the
// default template injects an app on 9901: the reservation, not an
// accident of the template, is what refuses it.
func TestReservedPortIsWhatRefuses(t *testing.T) {
	in := templateInjector(t, defaultWithoutReserved(t))
	for _, input := range [][]byte{appPod([]string{"9901"}), appPod(nil, `sidecar.kinject.dev/app-port: "9901"`)} {
		if _, report := run(t, in, inject.OpInject, input); report.Failed() {
			t.Errorf("without the reservation: %s", reportText(report))
		}
	}
	if ports := inject.DefaultTemplate().ReservedPorts; len(ports) != 1 || ports[0].Port != 9901 || ports[0].Container != "envoy" {
		t.Errorf("the default reserves %+v, want 9901 for envoy", ports)
	}
}

// TestComputedPortRefused: an expression that computes one of the
// sidecar's ports (here from a label no container declares) is refused as
// a conflict.
func TestComputedPortRefused(t *testing.T) {
	in := templateInjector(t, `containers:
- name: proxy
  image: example/proxy:1
  env: [{name: APP_PORT, value: "8080"}]
  ports: [{containerPort: 15001}]
reservedPorts:
- {port: 15000, container: proxy, description: admin}
parameters:
- annotation: app-port
  field: containers[proxy].env[APP_PORT].value
  type: port
  expression: "has(object.metadata.labels) && 'port' in object.metadata.labels ? dyn(int(object.metadata.labels['port'])) : null"
`)
	pod := func(port string) []byte {
		return []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {port: \"" + port + "\"}\nspec:\n  containers:\n  - {name: app, image: busybox}\n")
	}
	for port, want := range map[string]string{
		"15000": `parameters: app-port: the expression gives port 15000, a port of sidecar "proxy" (admin), not the app's`,
		"15001": `parameters: app-port: the expression gives port 15001, a port of sidecar "proxy" (containerPort), not the app's`,
		"99999": `"99999" is not a port number from 1 to 65535`,
		"3000":  "",
	} {
		_, report := run(t, in, inject.OpInject, pod(port))
		switch {
		case want == "" && report.Failed():
			t.Errorf("port %s: %s", port, reportText(report))
		case want != "" && !strings.Contains(reportText(report), want):
			t.Errorf("port %s: report %s, want %s", port, reportText(report), want)
		}
	}
}

// TestReservedPortErrors: a reserved port names a sidecar of the template
// and is not declared twice.
func TestReservedPortErrors(t *testing.T) {
	const sidecar = "containers:\n- name: proxy\n  image: example/proxy:1\n  ports: [{containerPort: 80}]\n"
	for _, c := range []struct{ name, ports, want string }{
		{"no container", "- {port: 9901}", "reservedPorts[0].container: is required"},
		{"unknown container", "- {port: 9901, container: envoy}", `reservedPorts[0].container: the template has no container named "envoy"`},
		{"declared", "- {port: 80, container: proxy}", `reservedPorts[0].port: 80/TCP is already a containerPort of container "proxy"`},
		{"twice", "- {port: 9901, container: proxy}\n- {port: 9901, container: proxy}", "reservedPorts[1].port: 9901/TCP is already a reserved port"},
		{"range", "- {port: 0, container: proxy}", `reservedPorts[0].port: "0" is not a port number`},
		{"protocol", "- {port: 9901, protocol: tcp, container: proxy}", `reservedPorts[0].protocol: "tcp" is not TCP, UDP or SCTP`},
		{"unknown key", "- {port: 9901, container: proxy, host: 127.0.0.1}", "reservedPorts[0].host: unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := inject.ParseTemplate([]byte(sidecar + "reservedPorts:\n" + c.ports + "\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

// TestUnreservedPorts: the ports an inline Envoy bootstrap binds are read
// from it; the default declares or reserves each of them, and without its
// reservedPorts entry the admin port is reported.
func TestUnreservedPorts(t *testing.T) {
	if got := inject.DefaultTemplate().UnreservedPorts(); len(got) != 0 {
		t.Errorf("the default: %+v, want none", got)
	}
	got := templateInjector(t, defaultWithoutReserved(t)).Template().UnreservedPorts()
	if len(got) != 1 || got[0] != (template.BoundPort{Container: "envoy", Port: 9901, Where: "admin"}) {
		t.Errorf("without reservedPorts: %+v, want the admin port 9901", got)
	}
	// A listener of its own, declared nowhere.
	text := inject.DefaultTemplateYAML()
	extra := strings.Replace(text, "      - name: stats\n", "      - name: extra\n        address:\n          socket_address: {address: 127.0.0.1, port_value: 15090}\n      - name: stats\n", 1)
	if extra == text {
		t.Fatal("no stats listener in the default's bootstrap")
	}
	if got := templateInjector(t, extra).Template().UnreservedPorts(); len(got) != 1 || got[0].Port != 15090 || got[0].Where != "listener extra" {
		t.Errorf("an extra listener: %+v", got)
	}
}

// defaultWithoutReserved is the default template's text without its
// reservedPorts list.
func defaultWithoutReserved(t *testing.T) string {
	t.Helper()
	text := inject.DefaultTemplateYAML()
	start, end := strings.Index(text, "reservedPorts:"), strings.Index(text, "# What a workload may set")
	if start < 0 || end < start {
		t.Fatal("the default template has no reservedPorts list before its parameters")
	}
	return text[:start] + text[end:]
}

// templateInjector is an injector of a template's text, default settings.
func templateInjector(t *testing.T, text string) *inject.Injector {
	t.Helper()
	tpl, err := inject.ParseTemplate([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}
