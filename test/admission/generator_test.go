package admission

import (
	"fmt"
	"math/rand"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// generator says what generatedPods draws beside plain Pods.
type generator struct {
	// sidecar and volume are the template's first container and volume,
	// copied (identically or not) into some Pods.
	sidecar, volume map[string]any
	// profile is the policy's profile: its inject annotation is drawn.
	profile string
	// params are the override parameters of the Pods' profiles (the
	// policy's own and others'), drawn with valid and invalid values.
	params []overrideKey
	// others inject some Pods before they are created, as a build-time
	// injection of another profile would.
	others []*inject.Injector
}

// overrideKey is an override annotation of some profile and its type.
type overrideKey struct {
	key string
	typ inject.ParameterType
}

// overrideKeys returns the override annotations of an injector's profile.
func overrideKeys(in *inject.Injector) []overrideKey {
	var out []overrideKey
	for _, p := range in.Template().Parameters {
		out = append(out, overrideKey{inject.ProfileAnnotation(in.Profile(), p.Annotation), p.Type})
	}
	return out
}

// overrideValues are values of each type, valid and not, as a workload
// may write them.
var overrideValues = map[inject.ParameterType][]string{
	inject.TypeQuantity: {"250m", "0.5", "1Gi", "2", "+1", ".5", "1e3", "100M", "64Mi", "lots", "-1", "1gi", " 1", "", "1.5.0"},
	inject.TypeImage:    {"envoyproxy/envoy:v1.35.0", "registry.local:5000/team/proxy:v2", "busybox", "ghcr.io/x/envoy@sha256:" + strings.Repeat("ab", 32), "Envoy:Latest", "a b", "", "proxy:"},
	inject.TypeInt:      {"2", "0", "-1", "16", "123456789012345678", "lots", "1.5", "+2", "02", "", "1e3"},
	inject.TypeString:   {"plain", "with \"quotes\" and \\", "line\nbreak", ""},
}

// generatedPods returns n Pod manifests from a seeded generator: app and
// init containers with and without ports, volumes, labels and annotations
// (some with values that need escaping), opt-in and opt-out annotations in
// any case, hostNetwork, another mesh's proxy, containers and volumes named
// like the template's (identical or not), ports the sidecar uses, a
// default-container annotation, namespaces, override annotations with
// valid and invalid values, and other profiles' injections.
func generatedPods(seed int64, n int, prefix string, g generator) [][]byte {
	sidecar, volume := g.sidecar, g.volume
	r := rand.New(rand.NewSource(seed))
	pick := func(options ...any) any { return options[r.Intn(len(options))] }
	chance := func(p float64) bool { return r.Float64() < p }
	var out [][]byte
	for i := 0; i < n; i++ {
		meta := map[string]any{
			"name":      fmt.Sprintf("%s-%d", prefix, i),
			"namespace": pick("default", "ns-a", "ns-b"),
		}
		labels := map[string]any{}
		if chance(0.6) {
			labels["app"] = pick("web", "api", "db")
		}
		if chance(0.4) {
			labels["tier"] = pick("db", "front", "")
		}
		if chance(0.2) {
			labels["mesh"] = pick("kinject", "other") // the template's label, same value or not
		}
		if len(labels) > 0 {
			meta["labels"] = labels
		}
		ann := map[string]any{}
		if chance(0.3) {
			ann["sidecar.kinject.dev/inject"] = pick("true", "false", "TRUE", "False", "")
		}
		if g.profile != "" && chance(0.3) {
			ann[inject.InjectAnnotationFor(g.profile)] = pick("true", "false", "True", "")
		}
		for _, k := range g.params {
			if chance(0.1) {
				values := overrideValues[k.typ]
				ann[k.key] = values[r.Intn(len(values))]
			}
		}
		if chance(0.2) {
			ann["initializer.kubernetes.io/envoy"] = pick("true", "false", "True")
		}
		if chance(0.2) {
			ann["kubectl.kubernetes.io/default-container"] = pick("app", "", "other")
		}
		if chance(0.3) {
			ann["note"] = pick("plain", "quote \" backslash \\ <html> & tab\t", "line\nbreak", "unicode ✓ \u2028")
		}
		if chance(0.15) {
			// The template's annotation with another value: the record keeps the old one.
			ann["prometheus.io/scrape"] = pick("false", "true", "a \"quoted\" <value>\n")
		}
		if len(ann) > 0 {
			meta["annotations"] = ann
		}
		var containers []any
		for j := 0; j < 1+r.Intn(3); j++ {
			c := map[string]any{"name": fmt.Sprintf("%s%d", pick("app", "web", "worker"), j), "image": pick("nginx:1.27", "busybox", "ghcr.io/x/app@sha256:"+fmt.Sprintf("%064d", j))}
			if chance(0.5) {
				port := pick(8080, 9090, 10000, 15001, 15000)
				c["ports"] = []any{map[string]any{"containerPort": port, "protocol": pick("TCP", "UDP")}}
			}
			containers = append(containers, c)
		}
		if chance(0.08) {
			containers = append(containers, map[string]any{"name": pick("istio-proxy", "linkerd-proxy"), "image": "proxy"})
		}
		if sidecar != nil && chance(0.12) {
			c := deepCopyMap(sidecar)
			if chance(0.5) {
				c["image"] = "someone/else:1" // same name, other content: a conflict
			}
			containers = append(containers, c)
		}
		spec := map[string]any{"containers": containers}
		if chance(0.3) {
			spec["initContainers"] = []any{map[string]any{"name": "setup", "image": "busybox", "command": []any{"true"}}}
		}
		var volumes []any
		if chance(0.4) {
			volumes = append(volumes, map[string]any{"name": "data", "emptyDir": map[string]any{}})
		}
		if volume != nil && chance(0.12) {
			v := deepCopyMap(volume)
			if chance(0.5) {
				v = map[string]any{"name": v["name"], "emptyDir": map[string]any{}} // same name, other content
			}
			volumes = append(volumes, v)
		}
		if len(volumes) > 0 {
			spec["volumes"] = volumes
		}
		if chance(0.1) {
			spec["hostNetwork"] = true
		}
		pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
		b, err := yaml.Marshal(pod)
		if err != nil {
			panic(err)
		}
		if len(g.others) > 0 && chance(0.35) {
			// Injected at build time by another profile (or left as it was
			// when that profile skips or refuses it).
			pre, _ := g.others[r.Intn(len(g.others))].ProcessText(inject.OpInject, b, 0)
			b = append([]byte(nil), pre...)
		}
		out = append(out, b)
	}
	return out
}

func deepCopyMap(m map[string]any) map[string]any {
	b, _ := yaml.Marshal(m)
	var out map[string]any
	_ = yaml.Unmarshal(b, &out)
	return out
}
