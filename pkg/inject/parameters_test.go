package inject_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

func TestParameterErrors(t *testing.T) {
	const sidecar = "containers:\n- name: proxy\n  image: example/proxy:1.0\n  args: [--port, \"80\", --log, info]\n  resources: {requests: {cpu: 100m}}\n"
	for _, c := range []struct{ name, params, want string }{
		{"no annotation", "- {field: 'containers[proxy].image', type: image}", "parameters[0].annotation: is required"},
		{"bad annotation", "- {annotation: 'cpu request', field: 'containers[proxy].image'}", `parameters[0].annotation: "cpu request" is not a valid annotation name`},
		{"own status", "- {annotation: status, field: 'containers[proxy].image'}", `"status" is the profile's own status annotation`},
		{"twice", "- {annotation: a, field: 'containers[proxy].image'}\n- {annotation: a, field: 'containers[proxy].image'}", `parameters[1].annotation: "a" is declared twice`},
		{"bad type", "- {annotation: a, field: 'containers[proxy].image', type: float}", `parameters[0].type: "float" is not a type (want quantity, image, int, port or string)`},
		{"unknown key", "- {annotation: a, field: 'containers[proxy].image', max: 3}", "parameters[0].max: unknown field"},
		{"bad field", "- {annotation: a, field: spec.containers}", `parameters[0].field: "spec.containers": want containers[NAME].FIELD`},
		{"no item", "- {annotation: a, field: 'containers[envoy].image', type: image}", `parameters[0].field: "containers[envoy].image": the template has no container named "envoy"`},
		{"bad default", "- {annotation: a, field: 'containers[proxy].resources.limits.cpu', type: quantity, default: lots}", `parameters[0].default: "lots" is not a resource quantity`},
		{"default differs", "- {annotation: a, field: 'containers[proxy].resources.requests.cpu', type: quantity, default: 200m}", `parameters[0].default: "200m" differs from the template's value "100m"`},
		{"needs default", "- {annotation: a, field: 'containers[proxy].resources.limits.cpu', type: quantity}", `parameters[0]: "containers[proxy].resources.limits.cpu" is not set in the template: give a default`},
		{"template value bad", "- {annotation: a, field: 'containers[proxy].args[--log]', type: int}", `the template's value at "containers[proxy].args[--log]": "info" is not an integer`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := inject.ParseTemplate([]byte(sidecar + "parameters:\n" + c.params + "\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to contain %s", err, c.want)
			}
		})
	}
}

// TestParameterFields: values land where the field says, in the form the
// template wrote them, and a missing field or flag is created.
func TestParameterFields(t *testing.T) {
	tpl, err := inject.ParseTemplate([]byte(`containers:
- name: proxy
  image: example/proxy:1.0
  args: [--workers=2, --log, info]
  resources: {limits: {cpu: 1}}
  env: [{name: MODE, value: fast}]
volumes:
- name: conf
  configMap: {name: proxy}
parameters:
- {annotation: workers, field: "containers[proxy].args[--workers]", type: int}
- {annotation: log, field: "containers[proxy].args[--log]"}
- {annotation: admin, field: "containers[proxy].args[--admin-port]", type: int, default: "9901"}
- {annotation: cpu-limit, field: "containers[proxy].resources.limits.cpu", type: quantity}
- {annotation: memory, field: "containers[proxy].resources.requests.memory", type: quantity, default: 64Mi}
- {annotation: mode, field: "containers[proxy].env[MODE].value"}
- {annotation: config, field: "volumes[conf].configMap.name"}
`))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(tpl, inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    sidecar.kinject.dev/workers: "8"
    sidecar.kinject.dev/log: debug
    sidecar.kinject.dev/cpu-limit: 1500m
    sidecar.kinject.dev/mode: safe
    sidecar.kinject.dev/config: proxy-v2
spec:
  containers:
  - name: app
    image: example/app:1.0
`
	out, report := run(t, in, inject.OpInject, []byte(pod))
	if len(report) != 1 || report[0].Action != inject.Injected {
		t.Fatalf("report: %s", reportText(report))
	}
	for _, want := range []string{
		`    args: [--workers=8, --log, debug, --admin-port, "9901"]`,
		`    resources: {limits: {cpu: 1500m}, requests: {memory: 64Mi}}`,
		`    env: [{name: MODE, value: safe}]`,
		`    configMap: {name: proxy-v2}`,
		`"values":{"config":"proxy-v2","cpu-limit":"1500m","log":"debug","mode":"safe","workers":"8"}`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	back, _ := run(t, in, inject.OpUninject, out)
	if string(back) != pod {
		t.Errorf("uninject:\n%s", back)
	}
	// The template's int stays an int when the value is one.
	plain, _ := run(t, in, inject.OpInject, []byte(strings.Replace(pod, "    sidecar.kinject.dev/cpu-limit: 1500m\n", "    sidecar.kinject.dev/cpu-limit: \"2\"\n", 1)))
	if !strings.Contains(string(plain), "{limits: {cpu: 2}") {
		t.Errorf("an int field took a quoted value:\n%s", plain)
	}
}

// quantitySamples are valid and invalid quantities, checked against the
// Kubernetes parser.
var quantitySamples = []string{
	"100m", "0.5", "1", "+1", "0u", "5n", "1e99", "1e100", "0200000E2200000000", "1Gi", "512Mi", "1e3", "1E3", "1.5e-2", ".5", "5.", "1E", "2k", "3M",
	"", "lots", "-1", "1.2.3", "1 Gi", "1gi", "1KI", "e3", "0x10", "1e", "1m5", "∞", "1Mi ",
}

func TestQuantityPattern(t *testing.T) {
	for _, s := range quantitySamples {
		checkQuantity(t, s)
	}
}

// FuzzQuantityPattern: a value passes the quantity check exactly when the
// Kubernetes parser accepts it as a non-negative quantity.
func FuzzQuantityPattern(f *testing.F) {
	for _, s := range quantitySamples {
		f.Add(s)
	}
	f.Fuzz(checkQuantity)
}

var digitFirst = regexp.MustCompile(`^\+?\.?[0-9]`)

// longExponent is an exponent of three digits or more: we refuse it, and
// the Kubernetes parser can take minutes over one.
var longExponent = regexp.MustCompile(`[eE][+-]?[0-9]{3}`)

func checkQuantity(t *testing.T, s string) {
	ours := template.TypeQuantity.Check(s) == nil
	if longExponent.MatchString(s) {
		if ours {
			t.Errorf("quantity %q: a three-digit exponent passes", s)
		}
		return
	}
	q, err := resource.ParseQuantity(s)
	theirs := err == nil && q.Sign() >= 0 && !strings.HasPrefix(s, "-")
	if theirs && !ours && !digitFirst.MatchString(s) {
		return // Kubernetes reads a suffix without a number ("e3") as zero; we ask for the number
	}
	if ours != theirs {
		t.Errorf("quantity %q: ours accepts=%v, Kubernetes accepts (non-negative)=%v (%v)", s, ours, theirs, err)
	}
}

func TestImagePattern(t *testing.T) {
	for _, s := range []string{
		"envoyproxy/envoy:v1.36.2", "nginx", "registry.example.com:5000/team/app:1.0",
		"ghcr.io/org/app@sha256:" + strings.Repeat("ab", 32), "localhost/app:latest", "a/b_c__d-e.f:tag_1.2-x",
		"[::1]:5000/app:1",
	} {
		if err := template.TypeImage.Check(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "Envoy Latest", "app:", "app:tag:tag", "app:tag@sha256:12", "-app", "app//b", ":tag"} {
		if template.TypeImage.Check(s) == nil {
			t.Errorf("%q passes as an image reference", s)
		}
	}
}

// TestDocParameterTable: the table of the embedded default's override
// annotations in docs/profiles.md lists exactly its parameters, with their
// fields, types and defaults.
func TestDocParameterTable(t *testing.T) {
	const doc = "docs/profiles.md"
	readme, err := os.ReadFile("../../" + doc)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(sidecar\\.kinject\\.dev/[a-z-]+)` \\| `([^`]+)`[^|]* \\| ([a-z]+) \\| `([^`]+)` \\|$")
	rows := row.FindAllStringSubmatch(string(readme), -1)
	params := inject.DefaultTemplate().Parameters
	if len(rows) != len(params) {
		t.Fatalf("%s lists %d parameters, the embedded default declares %d", doc, len(rows), len(params))
	}
	for i, p := range params {
		r := rows[i]
		if r[1] != naming.ProfileAnnotation("", p.Annotation) || "containers[envoy]."+r[2] != p.Field || r[3] != string(p.Type) || r[4] != p.Default {
			t.Errorf("%s: row %q != parameter %+v", doc, r[0], p)
		}
	}
}

// TestParametersWithSettings: --image moves the image parameter's default
// (an annotation still wins), and parameters follow a sidecar made native.
func TestParametersWithSettings(t *testing.T) {
	native := true
	pod := func(annotations string) []byte {
		return []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n" + annotations + "spec:\n  containers:\n  - name: app\n    image: example/app:1.0\n")
	}
	for _, c := range []struct {
		name        string
		s           inject.Settings
		annotations string
		want        []string
	}{
		{"image setting", inject.Settings{Image: "mirror.example.com/envoy:v1.36.2"}, "", []string{"image: mirror.example.com/envoy:v1.36.2"}},
		{"annotation wins", inject.Settings{Image: "mirror.example.com/envoy:v1.36.2"}, "  annotations:\n    sidecar.kinject.dev/image: envoyproxy/envoy:v1.37.0\n", []string{"image: envoyproxy/envoy:v1.37.0", `"values":{"image":"envoyproxy/envoy:v1.37.0"}`}},
		{"native", inject.Settings{Native: &native}, "  annotations:\n    sidecar.kinject.dev/concurrency: \"2\"\n", []string{"  initContainers:\n  - name: envoy\n", "    - --concurrency\n    - \"2\"\n", "    restartPolicy: Always\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := inject.New(inject.DefaultTemplate(), c.s)
			if err != nil {
				t.Fatal(err)
			}
			out, report := run(t, in, inject.OpInject, pod(c.annotations))
			if len(report) != 1 || report[0].Action != inject.Injected {
				t.Fatalf("report: %s", reportText(report))
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if back, _ := run(t, in, inject.OpUninject, out); string(back) != string(pod(c.annotations)) {
				t.Errorf("uninject:\n%s", back)
			}
		})
	}
}

// FuzzParameterChecks: the checks the binaries run accept exactly what the
// patterns an admission policy's CEL runs match.
func FuzzParameterChecks(f *testing.F) {
	for _, s := range append(quantitySamples, "envoyproxy/envoy:v1.36.2", "a/b_c__d-e.f:tag_1.2-x", "[::1]:5000/app:1",
		"ghcr.io/org/app@sha256:"+strings.Repeat("ab", 32), "Envoy Latest", "app:", "-1", "007", "123456789012345678", "1234567890123456789",
		"localhost:5000", "65535", "65536", "0", "+80", "x.y:1/a", "a@sha256+b.c:"+strings.Repeat("f", 32), "a@sha256-:"+strings.Repeat("f", 32), "A.b-c/d") {
		f.Add(s)
	}
	patterns := map[template.ParameterType]*regexp.Regexp{}
	for _, pt := range []template.ParameterType{template.TypeQuantity, template.TypeImage, template.TypeInt, template.TypeString, template.TypePort} {
		patterns[pt] = regexp.MustCompile(pt.Pattern())
	}
	f.Fuzz(func(t *testing.T, s string) {
		for pt, re := range patterns {
			if check, match := pt.Check(s) == nil, re.MatchString(s); check != match {
				t.Errorf("%s %q: the check says %v, the pattern %v", pt, s, check, match)
			}
		}
	})
}
