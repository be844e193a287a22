package envoy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

const envoyModule = "github.com/envoyproxy/go-control-plane/envoy"

// TestImageIsTheValidatedRelease: the default's image tag is the version
// of the Envoy API module the bootstraps are checked against.
func TestImageIsTheValidatedRelease(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(envoyModule) + ` (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatalf("go.mod does not require %s", envoyModule)
	}
	version := string(m[1])
	for _, p := range inject.DefaultTemplate().Parameters {
		if p.Annotation == "image" && p.Default != "envoyproxy/envoy:"+version {
			t.Errorf("image %s, Envoy API %s: pin both to the same release", p.Default, version)
		}
	}
}

// TestGoldenBootstraps validates every Envoy bootstrap of the core's golden
// corpus (what -update wrote: the invariant beside the goldens).
func TestGoldenBootstraps(t *testing.T) {
	checked := 0
	for _, s := range filePodSpecs(t, "../../pkg/inject/testdata/golden/*/expected.yaml") {
		if envoycheck.Sidecar(s.pod) == nil {
			continue
		}
		t.Run(filepath.Base(filepath.Dir(s.file)), func(t *testing.T) { checkPod(t, s.pod, "") })
		checked++
	}
	if want := configYAMLSpecs(t, "../../pkg/inject/testdata/golden/*/expected.yaml"); checked != want || want < 20 {
		t.Errorf("%d injected pod templates checked; the files hold %d pod specs with a container given --config-yaml (want all, at least 20)", checked, want)
	}
}

// configYAMLSpecs counts, apart from the pod reader above, the pod specs
// of the files matching pattern that have a container (or init
// container) whose args include --config-yaml: every document decoded as
// plain data and walked.
func configYAMLSpecs(t *testing.T, pattern string) int {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no files (%v)", pattern, err)
	}
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if hasConfigYAML(v["containers"]) || hasConfigYAML(v["initContainers"]) {
				n++
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n---") {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				continue // the corpus's invalid documents, left as they were
			}
			walk(v)
		}
	}
	return n
}

func hasConfigYAML(list any) bool {
	items, _ := list.([]any)
	for _, item := range items {
		c, _ := item.(map[string]any)
		args, _ := c["args"].([]any)
		for _, a := range args {
			if a == "--config-yaml" {
				return true
			}
		}
	}
	return false
}

// TestGeneratedBootstraps injects Pods whose ports vary and validates what
// Envoy gets, with the port it must proxy to.
func TestGeneratedBootstraps(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, annotations, containers string
		want                          string
	}{
		{"port 80", "", "- {name: app, image: nginx, ports: [{containerPort: 80}]}", "80"},
		{"port 3000 TCP", "", "- {name: app, image: node, ports: [{containerPort: 3000, protocol: TCP}]}", "3000"},
		{"named port", "", "- {name: app, image: a, ports: [{name: http, containerPort: 8443}]}", "8443"},
		{"UDP first", "", "- {name: app, image: dns, ports: [{containerPort: 53, protocol: UDP}, {containerPort: 5353}]}", "5353"},
		{"several containers", "", "- {name: app, image: a, ports: [{containerPort: 5000}]}\n- {name: cache, image: redis, ports: [{containerPort: 6379}]}", "5000"},
		{"no port", "", "- {name: worker, image: w}", "8080"},
		{"only UDP", "", "- {name: app, image: dns, ports: [{containerPort: 53, protocol: UDP}]}", "8080"},
		{"override", "sidecar.kinject.dev/app-port: \"9090\"", "- {name: app, image: a, ports: [{containerPort: 5000}]}", "9090"},
		{"override without port", "sidecar.kinject.dev/app-port: \"7000\"", "- {name: worker, image: w}", "7000"},
		{"max port", "", "- {name: app, image: a, ports: [{containerPort: 65535}]}", "65535"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			meta := "{name: p}"
			if tc.annotations != "" {
				meta = "{name: p, annotations: {" + tc.annotations + "}}"
			}
			doc := "apiVersion: v1\nkind: Pod\nmetadata: " + meta + "\nspec:\n  containers:\n" + indent(tc.containers, "  ")
			out, entries := in.ProcessText(inject.OpInject, []byte(doc), 0)
			if len(entries) != 1 || entries[0].Action != inject.Injected {
				t.Fatalf("entries %v", entries)
			}
			pods := podSpecs(t, out)
			if len(pods) != 1 {
				t.Fatalf("%d pods", len(pods))
			}
			checkPod(t, pods[0], tc.want)
		})
	}
}

// TestSidecarPortIsAConflict: an app on one of the sidecar's listener
// ports or on its admin port is not injected.
func TestSidecarPortIsAConflict(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	// 9901 is Envoy's admin API: declared by no container, reserved.
	for _, port := range []string{"10000", "9902", "9901"} {
		doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: app, image: a, ports: [{containerPort: " + port + "}]}\n"
		_, entries := in.ProcessText(inject.OpInject, []byte(doc), 0)
		if len(entries) != 1 || entries[0].Reason != inject.ReasonConflict {
			t.Errorf("port %s: %v, want a conflict", port, entries)
		}
	}
}

// checkPod validates the sidecar's bootstrap as the kubelet hands it to
// Envoy, and checks what Envoy's own validation cannot: every route's
// cluster exists, the listener ports differ from each other and from the
// app's, admin listens on 127.0.0.1 only, and the app cluster's port is
// appPort ("" for the first TCP port of the first container, or 8080).
func checkPod(t *testing.T, pod map[string]any, appPort string) {
	t.Helper()
	c := envoycheck.Sidecar(pod)
	args := envoycheck.ExpandArgs(c)
	config := envoycheck.FlagValue(args, "--config-yaml")
	if config == "" {
		t.Fatalf("no --config-yaml in %q", args)
	}
	if strings.Contains(config, "$(") {
		t.Fatalf("a variable is left unexpanded:\n%s", config)
	}
	b, err := envoycheck.Bootstrap([]byte(config), envoycheck.AppPorts(pod))
	if err != nil {
		t.Fatal(err)
	}
	if a := b.GetAdmin().GetAddress().GetSocketAddress(); a.GetAddress() != "127.0.0.1" {
		t.Errorf("admin listens on %q, want 127.0.0.1", a.GetAddress())
	}
	clusters := map[string]uint32{}
	for _, cl := range b.GetStaticResources().GetClusters() {
		ep := cl.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		clusters[cl.GetName()] = ep.GetPortValue()
	}
	if appPort == "" {
		appPort = firstTCPPort(pod)
	}
	if got := strconv.FormatUint(uint64(clusters["app"]), 10); got != appPort {
		t.Errorf("the app cluster goes to port %s, want %s", got, appPort)
	}
}

// injectDefault injects the embedded default into a pod (a Pod's spec
// seen as podSpecs returns it) and returns the injected one.
func injectDefault(t *testing.T, pod map[string]any) map[string]any {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": pod})
	if err != nil {
		t.Fatal(err)
	}
	out, entries := in.ProcessText(inject.OpInject, doc, 0)
	if len(entries) != 1 || entries[0].Action != inject.Injected {
		t.Fatalf("entries %v", entries)
	}
	pods := podSpecs(t, out)
	if len(pods) != 1 {
		t.Fatalf("%d pods", len(pods))
	}
	return pods[0]
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "B": "x y"}
	for in, want := range map[string]string{
		"$(A)": "1", "p$(A)q$(B)": "p1qx y", "$$(A)": "$(A)", "$(C)": "$(C)", "$(A": "$(A", "a$b": "a$b", "$": "$",
	} {
		if got := envoycheck.Expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// podSpecs returns the pod specs of the documents in data.
func podSpecs(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	docs, err := splitDocs(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, d := range docs {
		out = append(out, findSpecs(d)...)
	}
	return out
}

func splitDocs(data []byte) ([]any, error) {
	var out []any
	for _, text := range strings.Split("\n"+string(data), "\n---") {
		var v any
		if err := yaml.Unmarshal([]byte(text), &v); err != nil {
			continue // the corpus holds invalid documents on purpose
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// findSpecs finds every mapping with a containers list: pod specs at any
// depth (Pods, workloads, List items).
func findSpecs(v any) []map[string]any {
	var out []map[string]any
	switch v := v.(type) {
	case map[string]any:
		if cs, ok := v["containers"].([]any); ok && len(cs) > 0 {
			out = append(out, v)
		}
		for _, c := range v {
			out = append(out, findSpecs(c)...)
		}
	case []any:
		for _, c := range v {
			out = append(out, findSpecs(c)...)
		}
	}
	return out
}

// firstTCPPort is what the default's expression computes: the first TCP
// port of the first container, 8080 without one.
func firstTCPPort(pod map[string]any) string {
	cs := list(pod["containers"])
	if len(cs) == 0 {
		return "8080"
	}
	c, _ := cs[0].(map[string]any)
	for _, p := range list(c["ports"]) {
		p, _ := p.(map[string]any)
		if proto, _ := p["protocol"].(string); proto == "" || proto == "TCP" {
			if n, ok := p["containerPort"].(float64); ok {
				return strconv.Itoa(int(n))
			}
		}
	}
	return "8080"
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

func list(v any) []any { l, _ := v.([]any); return l }
