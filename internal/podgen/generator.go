package podgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// Injector reads a config (a SidecarInjection) into its injector, the
// embedded default template when the config names none.
func Injector(config string) (*inject.Injector, error) {
	cfg, err := inject.ParseConfig([]byte(config), nil)
	if err != nil {
		return nil, err
	}
	tpl := cfg.Template
	if tpl == nil {
		tpl = inject.DefaultTemplate()
	}
	return inject.New(tpl, cfg.Settings)
}

// Generator says what Pods draws beside plain Pods.
type Generator struct {
	// Sidecar and Volume are the template's first container and volume,
	// copied (identically or not) into some Pods.
	Sidecar, Volume map[string]any
	// Profile is the policy's profile: its inject annotation is drawn.
	Profile string
	// Params are the override parameters of the Pods' profiles (the
	// policy's own and others'), drawn with valid and invalid values.
	Params []OverrideKey
	// Others inject some Pods before they are created, as a build-time
	// injection of another profile would.
	Others []*inject.Injector
}

// OverrideKey is an override annotation of some profile and its type.
type OverrideKey struct {
	Key  string
	Type template.ParameterType
}

// For is the generator of a suite whose policy is config, with Pods
// carrying the injections of the other configs.
func For(config string, others ...string) (Generator, error) {
	in, err := Injector(config)
	if err != nil {
		return Generator{}, err
	}
	g := Generator{Profile: in.Profile(), Params: overrideKeys(in)}
	g.Sidecar, g.Volume, err = templateParts(in)
	if err != nil {
		return Generator{}, err
	}
	for _, o := range others {
		oi, err := Injector(o)
		if err != nil {
			return Generator{}, err
		}
		g.Others = append(g.Others, oi)
		g.Params = append(g.Params, overrideKeys(oi)...)
	}
	return g, nil
}

// templateParts are the first container (or init container) and volume
// the template adds, for the generator's look-alikes.
func templateParts(in *inject.Injector) (sidecar, volume map[string]any, err error) {
	decode := func(list []*kyaml.Node) (map[string]any, error) {
		if len(list) == 0 {
			return nil, nil
		}
		var m map[string]any
		return m, list[0].Decode(&m)
	}
	tpl := in.Template()
	if sidecar, err = decode(tpl.Containers); err == nil && sidecar == nil {
		sidecar, err = decode(tpl.InitContainers)
	}
	if err != nil {
		return nil, nil, err
	}
	volume, err = decode(tpl.Volumes)
	return sidecar, volume, err
}

// overrideKeys returns the override annotations of an injector's profile.
func overrideKeys(in *inject.Injector) []OverrideKey {
	var out []OverrideKey
	for _, p := range in.Template().Parameters {
		out = append(out, OverrideKey{naming.ProfileAnnotation(in.Profile(), p.Annotation), p.Type})
	}
	return out
}

// overrideValues are values of each type, valid and not, as a workload
// may write them.
var overrideValues = map[template.ParameterType][]string{
	template.TypeQuantity: {"250m", "0.5", "1Gi", "2", "+1", ".5", "1e3", "100M", "64Mi", "lots", "-1", "1gi", " 1", "", "1.5.0"},
	template.TypeImage:    {"envoyproxy/envoy:v1.35.0", "registry.local:5000/team/proxy:v2", "busybox", "ghcr.io/x/envoy@sha256:" + strings.Repeat("ab", 32), "Envoy:Latest", "a b", "", "proxy:"},
	template.TypeInt:      {"2", "0", "-1", "16", "123456789012345678", "lots", "1.5", "+2", "02", "", "1e3"},
	template.TypeString:   {"plain", "with \"quotes\" and \\", "line\nbreak", ""},
	// The sidecar's own ports (Envoy's admin, proxy and stats ports) among
	// them: an app port may never be one.
	template.TypePort: {"8080", "3000", "9901", "10000", "9902", "0", "65536", "http", "080", ""},
}

// Pods returns n Pod manifests from a seeded generator: app and init
// containers with and without ports, volumes, labels and annotations (some
// with values that need escaping), opt-in and opt-out annotations in any
// case, hostNetwork, another mesh's proxy, containers and volumes named
// like the template's (identical or not), ports the sidecar uses, a
// default-container annotation, namespaces, override annotations with
// valid and invalid values, fields present but empty (null, ~, [] and {},
// and in JSON written across lines), restart policies of Pods that run
// to completion, and other profiles' injections,
// whose records then hold every kind of field the core writes. About a
// third are indented JSON.
func (g Generator) Pods(seed int64, n int, prefix string) [][]byte {
	r := rand.New(rand.NewSource(seed))
	var out [][]byte
	for i := 0; i < n; i++ {
		pod := g.pod(r, fmt.Sprintf("%s-%d", prefix, i))
		var b []byte
		if r.Float64() < 0.35 {
			emptyCollections(draw{r}, pod)
			b = indentedJSON(pod)
		} else {
			b = yamlWithNullTokens(r, pod)
		}
		if len(g.Others) > 0 && r.Float64() < 0.4 {
			// Injected at build time by another profile (or left as it was
			// when that profile skips or refuses it).
			pre, _ := g.Others[r.Intn(len(g.Others))].ProcessText(inject.OpInject, b, 0)
			b = append([]byte(nil), pre...)
		}
		out = append(out, b)
	}
	return out
}

// draw picks among options and flips coins.
type draw struct{ *rand.Rand }

func (d draw) pick(options ...any) any { return options[d.Intn(len(options))] }
func (d draw) chance(p float64) bool   { return d.Float64() < p }
func (d draw) emptyList() any          { return d.pick(nil, []any{}) }
func (d draw) emptyMap() any           { return d.pick(nil, map[string]any{}) }
func (d draw) maybe(m map[string]any, k string, p float64, v func() any) {
	if d.chance(p) {
		m[k] = v()
	}
}

func (g Generator) pod(r *rand.Rand, name string) map[string]any {
	d := draw{r}
	meta := map[string]any{"name": name, "namespace": d.pick("default", "ns-a", "ns-b")}
	labels := map[string]any{}
	d.maybe(labels, "app", 0.6, func() any { return d.pick("web", "api", "db") })
	d.maybe(labels, "tier", 0.4, func() any { return d.pick("db", "front", "") })
	// The template's label, same value or not.
	d.maybe(labels, "mesh", 0.2, func() any { return d.pick("kinject", "other") })
	switch {
	case len(labels) > 0:
		meta["labels"] = labels
	case d.chance(0.2):
		meta["labels"] = d.emptyMap()
	}
	ann := map[string]any{}
	d.maybe(ann, "sidecar.kinject.dev/inject", 0.3, func() any { return d.pick("true", "false", "TRUE", "False", "", "falſe") })
	if g.Profile != "" {
		d.maybe(ann, naming.InjectAnnotationFor(g.Profile), 0.3, func() any { return d.pick("true", "false", "True", "") })
	}
	for _, k := range g.Params {
		values := overrideValues[k.Type]
		d.maybe(ann, k.Key, 0.1, func() any { return values[d.Intn(len(values))] })
	}
	d.maybe(ann, "initializer.kubernetes.io/envoy", 0.2, func() any { return d.pick("true", "false", "True") })
	d.maybe(ann, "kubectl.kubernetes.io/default-container", 0.2, func() any { return d.pick("app0", "", "other") })
	d.maybe(ann, "note", 0.3, func() any {
		return d.pick("plain", "quote \" backslash \\ <html> & tab\t", "line\nbreak", "unicode ✓ \u2028")
	})
	// Templates' annotations with other values: the records keep the old.
	d.maybe(ann, "prometheus.io/scrape", 0.15, func() any { return d.pick("false", "true", "a \"quoted\" <value>\n", "tab\t\x01 \\ ✓ \u2028") })
	d.maybe(ann, "logs.example/scrape", 0.15, func() any { return d.pick("false", "true", "a \"b\"") })
	switch {
	case len(ann) > 0:
		meta["annotations"] = ann
	case d.chance(0.2):
		meta["annotations"] = d.emptyMap()
	}
	spec := map[string]any{"containers": g.containers(d)}
	switch {
	case d.chance(0.3):
		spec["initContainers"] = []any{map[string]any{"name": "setup", "image": "busybox", "command": []any{"true"}}}
	case d.chance(0.2):
		spec["initContainers"] = d.emptyList()
	}
	var volumes []any
	if d.chance(0.4) {
		volumes = append(volumes, map[string]any{"name": "data", "emptyDir": map[string]any{}})
	}
	if g.Volume != nil && d.chance(0.12) {
		v := deepCopyMap(g.Volume)
		if d.chance(0.5) {
			v = map[string]any{"name": v["name"], "emptyDir": map[string]any{}} // same name, other content
		}
		volumes = append(volumes, v)
	}
	switch {
	case len(volumes) > 0:
		spec["volumes"] = volumes
	case d.chance(0.4):
		spec["volumes"] = d.emptyList()
	}
	if d.chance(0.1) {
		spec["hostNetwork"] = true
	}
	if d.chance(0.3) {
		serviceAccountToken(d, spec)
	}
	// A Job's Pod (Never, OnFailure) runs to completion: a classic
	// sidecar is refused there. Always is what the API server defaults.
	if d.chance(0.25) {
		spec["restartPolicy"] = d.pick("Never", "OnFailure", "Always")
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
}

// serviceAccountToken gives spec what the ServiceAccount admission plugin
// gives a Pod of a cluster with service accounts (a controller's Pod has
// it before the policy runs): the projected kube-api-access-* volume,
// mounted read-only in every container.
func serviceAccountToken(d draw, spec map[string]any) {
	name := "kube-api-access-" + d.pick("x7k2p", "9qzrt", "abcde").(string)
	var volumes []any
	if v, ok := spec["volumes"].([]any); ok {
		volumes = v
	}
	spec["volumes"] = append(volumes, map[string]any{"name": name, "projected": map[string]any{
		"defaultMode": 420,
		"sources": []any{
			map[string]any{"serviceAccountToken": map[string]any{"expirationSeconds": 3607, "path": "token"}},
			map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt", "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
			map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{"path": "namespace", "fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
		},
	}})
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			m := c.(map[string]any)
			mounts, _ := m["volumeMounts"].([]any)
			m["volumeMounts"] = append(mounts, map[string]any{"name": name, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true})
		}
	}
	spec["serviceAccountName"] = "default"
}

func (g Generator) containers(d draw) []any {
	var containers []any
	for j := 0; j < 1+d.Intn(3); j++ {
		c := map[string]any{"name": fmt.Sprintf("%s%d", d.pick("app", "web", "worker"), j), "image": d.pick("nginx:1.27", "busybox", "ghcr.io/x/app@sha256:"+fmt.Sprintf("%064d", j))}
		if d.chance(0.5) {
			port := d.pick(8080, 9090, 10000, 15001, 15000, 2020, 9901, 9902)
			c["ports"] = []any{map[string]any{"containerPort": port, "protocol": d.pick("TCP", "UDP")}}
		}
		containers = append(containers, c)
	}
	if d.chance(0.08) {
		containers = append(containers, map[string]any{"name": d.pick("istio-proxy", "linkerd-proxy"), "image": "proxy"})
	}
	if g.Sidecar != nil && d.chance(0.12) {
		c := deepCopyMap(g.Sidecar)
		if d.chance(0.5) {
			c["image"] = "someone/else:1" // same name, other content: a conflict
		}
		containers = append(containers, c)
	}
	return containers
}

// emptyCollections gives a Pod bound for JSON, most of the time, empty
// collections where it has none: JSON generators write them, and the
// records of the profiles that fill them keep their layout.
func emptyCollections(d draw, pod map[string]any) {
	spec := pod["spec"].(map[string]any)
	for _, f := range []string{"volumes", "initContainers"} {
		if _, ok := spec[f]; !ok && d.chance(0.6) {
			spec[f] = []any{}
		}
	}
	meta := pod["metadata"].(map[string]any)
	if _, ok := meta["annotations"]; !ok && d.chance(0.5) {
		meta["annotations"] = map[string]any{}
	}
}

// emptyCollection is an empty list or map as encoding/json indents it.
var emptyCollection = regexp.MustCompile(`(?m)^( *)("[^"]*": )(\[\]|\{\})`)

// indentedJSON is the Pod as indented JSON, its empty collections written
// across two lines ("[\n    ]"), as some generators write them.
func indentedJSON(pod map[string]any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(pod); err != nil {
		panic(err) // maps of strings, numbers and lists
	}
	return emptyCollection.ReplaceAllFunc(buf.Bytes(), func(m []byte) []byte {
		sub := emptyCollection.FindSubmatch(m)
		indent, key, pair := string(sub[1]), string(sub[2]), string(sub[3])
		return []byte(indent + key + pair[:1] + "\n" + indent + pair[1:])
	})
}

// nullValue is a null field as sigs.k8s.io/yaml writes it.
var nullValue = regexp.MustCompile(`(?m): null$`)

// yamlWithNullTokens is the Pod as YAML, its null fields written null, ~
// or nothing at all.
func yamlWithNullTokens(r *rand.Rand, pod map[string]any) []byte {
	b, err := yaml.Marshal(pod)
	if err != nil {
		panic(err)
	}
	d := draw{r}
	return nullValue.ReplaceAllFunc(b, func([]byte) []byte { return []byte(d.pick(": null", ": ~", ":").(string)) })
}

func deepCopyMap(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
