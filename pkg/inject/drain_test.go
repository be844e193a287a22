package inject_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

const drainSidecar = "containers:\n- name: proxy\n  image: example/proxy:1\n  ports: [{containerPort: 80}]\nreservedPorts:\n- {port: 9901, container: proxy}\n"

// TestDrainErrors: a drain names a sidecar of the template and a port it
// binds, paths, seconds in range, and nothing else; each error names the
// field.
func TestDrainErrors(t *testing.T) {
	for _, c := range []struct{ name, drain, want string }{
		{"not a mapping", "drain: [x]", "drain: must be a mapping with container, port, fail, restore and seconds"},
		{"no container", "drain: {port: 9901, fail: /f, restore: /r}", "drain.container: is required"},
		{"no port", "drain: {container: proxy, fail: /f, restore: /r}", "drain.port: is required"},
		{"no fail", "drain: {container: proxy, port: 9901, restore: /r}", "drain.fail: is required"},
		{"no restore", "drain: {container: proxy, port: 9901, fail: /f}", "drain.restore: is required"},
		{"unknown container", "drain: {container: envoy, port: 9901, fail: /f, restore: /r}", `drain.container: the template has no container named "envoy"`},
		{"port not bound", "drain: {container: proxy, port: 9902, fail: /f, restore: /r}", `drain.port: container "proxy" neither declares nor reserves port 9902/TCP`},
		{"port range", "drain: {container: proxy, port: 70000, fail: /f, restore: /r}", `drain.port: "70000" is not a port number`},
		{"path", "drain: {container: proxy, port: 9901, fail: healthcheck/fail, restore: /r}", `drain.fail: "healthcheck/fail" is not an HTTP path`},
		{"path space", "drain: {container: proxy, port: 9901, fail: /f, restore: '/r x'}", `drain.restore: "/r x" is not an HTTP path`},
		{"seconds", "drain: {container: proxy, port: 9901, fail: /f, restore: /r, seconds: 301}", `drain.seconds: "301" is not a number of seconds from 0 to 300`},
		{"negative seconds", "drain: {container: proxy, port: 9901, fail: /f, restore: /r, seconds: -1}", `drain.seconds: "-1"`},
		{"nested", "drain: {container: proxy, port: 9901, fail: {a: b}, restore: /r}", "drain.fail: must be a scalar"},
		{"unknown key", "drain: {container: proxy, port: 9901, fail: /f, restore: /r, method: GET}", "drain.method: unknown field (a drain has container, port, fail, restore and seconds)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := inject.ParseTemplate([]byte(drainSidecar + c.drain + "\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, c.want)
			}
		})
	}
	// a declared containerPort serves as well as a reserved one
	if _, err := inject.ParseTemplate([]byte(drainSidecar + "drain: {container: proxy, port: 80, fail: /f, restore: /r}\n")); err != nil {
		t.Errorf("a drain on a declared port: %v", err)
	}
}

// TestDrainRoundTrip: a template's drain is read, written by Document
// and read back the same, and leaves the template's hash as it is
// without it: it changes nothing a Pod is given.
func TestDrainRoundTrip(t *testing.T) {
	with, err := inject.ParseTemplate([]byte(drainSidecar + "drain: {container: proxy, port: 9901, fail: /healthcheck/fail, restore: /healthcheck/ok, seconds: 7}\n"))
	if err != nil {
		t.Fatal(err)
	}
	without, err := inject.ParseTemplate([]byte(drainSidecar))
	if err != nil {
		t.Fatal(err)
	}
	want := template.Drain{Container: "proxy", Port: 9901, Fail: "/healthcheck/fail", Restore: "/healthcheck/ok", Seconds: 7}
	if with.Drain == nil || *with.Drain != want {
		t.Fatalf("drain %+v, want %+v", with.Drain, want)
	}
	if without.Drain != nil {
		t.Errorf("a template without drain has %+v", without.Drain)
	}
	if with.Hash() != without.Hash() {
		t.Errorf("the drain changes the hash: %s, %s", with.Hash(), without.Hash())
	}
	text, err := yaml.String(with.Document())
	if err != nil {
		t.Fatal(err)
	}
	again, err := inject.ParseTemplate([]byte(text))
	if err != nil {
		t.Fatalf("Document does not parse: %v\n%s", err, text)
	}
	if again.Drain == nil || *again.Drain != want {
		t.Errorf("read back %+v, want %+v\n%s", again.Drain, want, text)
	}
}

// TestDefaultDrain: the default drains through Envoy's admin API, on the
// port its bootstrap gives the admin address and its reservedPorts lists,
// and its readiness probe reads /ready, which /healthcheck/fail fails.
func TestDefaultDrain(t *testing.T) {
	d := inject.DefaultTemplate()
	want := template.Drain{Container: "envoy", Port: 9901, Fail: "/healthcheck/fail", Restore: "/healthcheck/ok", Seconds: 5}
	if d.Drain == nil || *d.Drain != want {
		t.Fatalf("the default's drain is %+v, want %+v", d.Drain, want)
	}
	admin := false
	for _, p := range d.BoundPorts() {
		admin = admin || (p.Container == "envoy" && p.Where == "admin" && p.Port == d.Drain.Port)
	}
	if !admin {
		t.Errorf("the default's bootstrap binds no admin address on port %d: %+v", d.Drain.Port, d.BoundPorts())
	}
	reserved := false
	for _, r := range d.ReservedPorts {
		reserved = reserved || (r.Container == "envoy" && r.Port == d.Drain.Port)
	}
	if !reserved {
		t.Errorf("the default does not reserve the drain's port %d", d.Drain.Port)
	}
	text := inject.DefaultTemplateYAML()
	if !strings.Contains(text, "  readinessProbe:\n    httpGet:\n      path: /ready\n") {
		t.Errorf("the default's readinessProbe does not read /ready, which the drain fails")
	}
}
