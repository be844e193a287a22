package envoycheck

import (
	"encoding/json"
	"strings"
	"testing"
)

// sidecarPod is a pod spec (decoded JSON) with the base bootstrap in an
// Envoy container of list (containers or initContainers), its cluster's
// port as the variable PORT the kubelet expands, and the app's ports.
func sidecarPod(t *testing.T, list, configArg string, appPorts string) map[string]any {
	t.Helper()
	config := strings.Replace(baseBootstrap, "port_value: 8080}", "port_value: $(PORT)}", 1)
	args, err := json.Marshal(strings.Split(configArg, " "))
	if err != nil {
		t.Fatal(err)
	}
	args = []byte(strings.Replace(string(args), "CONFIG", strings.ReplaceAll(strings.ReplaceAll(config, `"`, `\"`), "\n", `\n`), 1))
	doc := `{"` + list + `": [{"name": "envoy", "env": [{"name": "PORT", "value": "8080"}, {"name": "FROM", "valueFrom": {}}],
		"ports": [{"containerPort": 10000}], "args": ` + string(args) + `}],
		"containers": [{"name": "app", "ports": ` + appPorts + `}]}`
	if list == "containers" {
		doc = `{"containers": [{"name": "app", "ports": ` + appPorts + `}, {"name": "envoy", "env": [{"name": "PORT", "value": "8080"}],
			"args": ` + string(args) + `}]}`
	}
	var pod map[string]any
	if err := json.Unmarshal([]byte(doc), &pod); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return pod
}

// TestPod checks a pod spec as the kubelet hands the bootstrap to Envoy:
// the sidecar found classic or native, its arguments expanded from its
// env, the app's TCP ports (not the sidecar's, not UDP) held apart from
// the listeners.
func TestPod(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, list, args, appPorts string
		noSidecar                  bool
		noEnv                      bool   // the sidecar's env dropped: $(PORT) stays
		want                       string // "" passes
	}{
		{name: "classic", list: "containers", args: "--config-yaml CONFIG", appPorts: `[{"containerPort": 8080}]`},
		{name: "native", list: "initContainers", args: "--mode serve --config-yaml CONFIG", appPorts: `[{"containerPort": 8080}]`},
		{name: "flag=value", list: "initContainers", args: "--config-yaml=CONFIG", appPorts: `[]`},
		{name: "an app port on a listener", list: "initContainers", args: "--config-yaml CONFIG", appPorts: `[{"containerPort": 10000}]`,
			want: "listener app: port 10000 is an app port"},
		{name: "an explicit TCP app port on a listener", list: "containers", args: "--config-yaml CONFIG", appPorts: `[{"containerPort": 9902, "protocol": "TCP"}]`,
			want: "listener stats: port 9902 is an app port"},
		{name: "a UDP port shares a listener's number", list: "initContainers", args: "--config-yaml CONFIG", appPorts: `[{"containerPort": 10000, "protocol": "UDP"}]`},
		{name: "an unexpanded variable", list: "initContainers", args: "--config-yaml CONFIG", appPorts: `[]`, noEnv: true,
			want: "a variable is left unexpanded"},
		{name: "an envoy container without a bootstrap", list: "initContainers", args: "--config-file /etc/envoy.yaml", appPorts: `[]`, noSidecar: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pod := sidecarPod(t, c.list, c.args, c.appPorts)
			if c.noEnv {
				for _, l := range []string{"containers", "initContainers"} {
					for _, ctr := range list(pod[l]) {
						delete(ctr.(map[string]any), "env")
					}
				}
			}
			if got := Sidecar(pod) == nil; got != c.noSidecar {
				t.Fatalf("no sidecar = %v, want %v", got, c.noSidecar)
			}
			b, err := Pod(pod)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error = %v, want none", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			case c.want == "" && (b == nil) != c.noSidecar:
				t.Fatalf("bootstrap = %v, want one only with a sidecar", b)
			}
			if c.want == "" && b != nil {
				port := b.GetStaticResources().GetClusters()[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress().GetPortValue()
				if port != 8080 {
					t.Errorf("the app cluster's port = %d, want $(PORT) expanded to 8080", port)
				}
			}
		})
	}
}

// TestExpand: $(VAR) of a defined variable is its value, $$ is $,
// anything else stays as written (the kubelet's rules).
func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"A": "1", "B": "x y"}
	for _, c := range []struct{ name, in, want string }{
		{"a variable", "$(A)", "1"},
		{"two variables in text", "p$(A)q$(B)", "p1qx y"},
		{"an escaped reference", "$$(A)", "$(A)"},
		{"an undefined variable", "$(C)", "$(C)"},
		{"unclosed", "x$(A", "x$(A"},
		{"a dollar before a letter", "a$b", "a$b"},
		{"a dollar at the end", "a$", "a$"},
		{"two dollars at the end", "a$$", "a$"},
		{"a variable at the end after text", "ab$(A)", "ab1"},
		{"an empty name, then a variable", "$()x$(A)", "$()x1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Expand(c.in, env); got != c.want {
				t.Errorf("Expand(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// TestFlagValue: the word after the flag, or after "flag=".
func TestFlagValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"the next word", []string{"-a", "--config-yaml", "x", "--config-yaml", "y"}, "x"},
		{"flag=value", []string{"--config-yaml=x=y"}, "x=y"},
		{"the flag last", []string{"--config-yaml"}, ""},
		{"a longer flag", []string{"--config-yaml-path", "x"}, ""},
		{"absent", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := FlagValue(c.args, "--config-yaml"); got != c.want {
				t.Errorf("FlagValue(%q) = %q, want %q", c.args, got, c.want)
			}
		})
	}
}
