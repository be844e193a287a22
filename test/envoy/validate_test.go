package envoy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
)

// defaultBootstrap is the embedded default's bootstrap with the app port
// set.
func defaultBootstrap(t *testing.T) string {
	t.Helper()
	pods := podSpecs(t, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n"))
	if len(pods) != 1 {
		t.Fatalf("%d pod specs", len(pods))
	}
	return envoycheck.FlagValue(envoycheck.ExpandArgs(envoycheck.Sidecar(injectDefault(t, pods[0]))), "--config-yaml")
}

// TestValidatorRejects: each broken bootstrap fails the check with the
// reason named; the default passes it.
func TestValidatorRejects(t *testing.T) {
	good := defaultBootstrap(t)
	if _, err := envoycheck.Bootstrap([]byte(good), map[uint32]bool{8080: true}); err != nil {
		t.Fatalf("the default: %v", err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"tcp proxy without a cluster", "cluster: app\n", "\n", "ClusterSpecifier"},
		{"hcm without routes", "route_config:", "", ""},
		{"route to a missing cluster", "route: {cluster: admin}", "route: {cluster: nowhere}", `cluster "nowhere", which does not exist`},
		{"duplicate listener ports", "port_value: 9902}", "port_value: 10000}", "port 10000 is also listener app's"},
		{"listener on the admin port", "port_value: 9902}", "port_value: 9901}", "port 9901 is also the admin API's"},
		{"unknown typed_config", "envoy.extensions.filters.http.router.v3.Router", "envoy.extensions.filters.http.nope.v3.Nope", "Nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.from) {
				t.Fatalf("the default's bootstrap has no %q", c.from)
			}
			broken := strings.Replace(good, c.from, c.to, 1)
			if c.name == "hcm without routes" {
				broken = dropHCMRoutes(t, good)
				c.want = "RouteSpecifier"
			}
			_, err := envoycheck.Bootstrap([]byte(broken), map[uint32]bool{8080: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// dropHCMRoutes removes the HttpConnectionManager's route_config block.
func dropHCMRoutes(t *testing.T, config string) string {
	t.Helper()
	lines := strings.Split(config, "\n")
	var out []string
	skip := -1
	for _, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if skip >= 0 && indent > skip {
			continue
		}
		skip = -1
		if strings.TrimSpace(l) == "route_config:" {
			skip = indent
			continue
		}
		out = append(out, l)
	}
	if len(out) == len(lines) {
		t.Fatal("no route_config in the bootstrap")
	}
	return strings.Join(out, "\n")
}

// TestDoorBootstraps: every injected pod template that inject-fn's
// goldens and the examples (kustomize, kpt, Helm, Argo CD, CI) hold
// carries a bootstrap that passes the whole check.
func TestDoorBootstraps(t *testing.T) {
	patterns := []string{"../../fn/processor/testdata/*/expected.yaml", "../../examples/*/expected.yaml",
		"../../examples/*/*/expected.yaml", "../../examples/*/rendered/*.yaml", "../../examples/*/*/rendered/*.yaml"}
	specs := filePodSpecs(t, patterns...)
	checked := 0
	for _, s := range specs {
		b, err := envoycheck.Pod(s.pod)
		if err != nil {
			t.Errorf("%s: %v", s.file, err)
		}
		if b != nil {
			checked++
		}
	}
	// Each bootstrap is the value after one "--config-yaml" argument: a
	// sidecar the check does not find leaves one of them unchecked.
	want := configYAMLArgs(t, patterns...)
	t.Logf("%d bootstraps in %d pod templates", checked, len(specs))
	if checked != want {
		t.Errorf("%d bootstraps checked, but the files hold %d --config-yaml arguments", checked, want)
	}
}

// configYAMLArgs counts the strings "--config-yaml" of the documents of
// the files the patterns match: an argument of a container, where a
// policy's CEL holds it inside a longer string.
func configYAMLArgs(t *testing.T, patterns ...string) int {
	t.Helper()
	var count func(v any) int
	count = func(v any) int {
		n := 0
		switch v := v.(type) {
		case map[string]any:
			for _, c := range v {
				n += count(c)
			}
		case []any:
			for _, c := range v {
				n += count(c)
			}
		case string:
			if v == "--config-yaml" {
				n++
			}
		}
		return n
	}
	n := 0
	for _, pattern := range patterns {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs, err := splitDocs(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				n += count(d)
			}
		}
	}
	return n
}

// filePodSpec is a pod spec of a file.
type filePodSpec struct {
	file string
	pod  map[string]any
}

// filePodSpecs returns the pod specs of every file the patterns match.
func filePodSpecs(t *testing.T, patterns ...string) []filePodSpec {
	t.Helper()
	var out []filePodSpec
	for _, pattern := range patterns {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no file matches %s: the corpus moved", pattern)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, pod := range podSpecs(t, data) {
				out = append(out, filePodSpec{f, pod})
			}
		}
	}
	return out
}
