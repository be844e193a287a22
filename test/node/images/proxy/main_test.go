package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// sidecar is the embedded default's sidecar, injected into a Pod whose
// app listens on 3000.
func sidecar(t *testing.T) map[string]any {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: app, image: a, ports: [{containerPort: 3000}]}\n"
	out, entries := in.ProcessText(inject.OpInject, []byte(pod), 0)
	if len(entries) != 1 || entries[0].Action != inject.Injected {
		t.Fatalf("entries %v", entries)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(out, &obj); err != nil {
		t.Fatal(err)
	}
	c := envoycheck.Sidecar(obj["spec"].(map[string]any))
	if c == nil {
		t.Fatalf("no sidecar in\n%s", out)
	}
	return c
}

// TestDefaultSidecar runs the stand-in with the arguments the kubelet
// gives the default sidecar ($(VAR)s expanded from its env): it takes
// every flag, and plans the listeners the bootstrap names.
func TestDefaultSidecar(t *testing.T) {
	args := envoycheck.ExpandArgs(sidecar(t))
	if err := run(append(slices.Clone(args), "--mode=validate")); err != nil {
		t.Fatalf("the stand-in refuses the default's arguments: %v", err)
	}
	p, err := readBootstrap([]byte(envoycheck.FlagValue(args, "--config-yaml")))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("admin %s; %v", p.admin, p.listeners)
	want := "admin 127.0.0.1:9901; [{app 0.0.0.0:10000 127.0.0.1:3000 []} {stats 0.0.0.0:9902  [{/ready  127.0.0.1:9901} {/stats/prometheus  127.0.0.1:9901}]}]"
	if got != want {
		t.Errorf("plan:\n got %s\nwant %s", got, want)
	}
}

// TestRefuses: what Envoy would not run, the stand-in does not either,
// so that a Pod it runs in proves the sidecar's arguments.
func TestRefuses(t *testing.T) {
	raw := sidecar(t)["args"].([]any)
	var unexpanded []string
	for _, a := range raw {
		unexpanded = append(unexpanded, fmt.Sprint(a))
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a variable left unexpanded", append(unexpanded, "--mode=validate"), "reading the bootstrap"},
		{"an unknown flag", []string{"--no-such-flag"}, "not defined"},
		{"no bootstrap", []string{"--mode", "validate"}, "no bootstrap"},
		{"an unknown mode", []string{"--mode", "fly", "--config-yaml", "admin: {address: {socket_address: {address: 127.0.0.1, port_value: 9901}}}"}, "--mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestBrokenImage: the broken tag's stand-in exits at once, whatever its
// flags, naming why.
func TestBrokenImage(t *testing.T) {
	t.Setenv(brokenEnv, "a bad release")
	if err := run([]string{"--config-yaml", "{}"}); err == nil || !strings.Contains(err.Error(), "a bad release") {
		t.Errorf("run: %v, want the broken image's error", err)
	}
}
