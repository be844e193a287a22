package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/plugin/local"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// effectsPods are the objects the template flags' effects are seen on:
// a plain Pod, one on the host's network, a Deployment, and a custom kind
// whose pod template is at spec.runner.template.
const effectsPods = `apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: shop}
spec:
  containers: [{name: app, image: busybox, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: host, namespace: shop}
spec:
  hostNetwork: true
  containers: [{name: app, image: busybox, ports: [{containerPort: 8080}]}]
---
apiVersion: example.com/v1
kind: Runner
metadata: {name: runner, namespace: shop}
spec:
  runner:
    template:
      spec:
        containers: [{name: app, image: busybox, ports: [{containerPort: 8080}]}]
`

// effectsTemplate adds a privileged sidecar: a template --strict refuses.
const effectsTemplate = `containers:
- name: flagged
  image: example.com/flagged:v1
  securityContext: {privileged: true}
`

// TestTemplateFlagsTakeEffect runs inject --local, policy and explain
// --local with each template flag and without it, on the same objects,
// and wants the flag's effect in each output: what the flag says is
// seen, not only that the command takes it. (status, restart and check
// read the same flags through readCurrent and PolicyOptions.compile,
// which TestReadCurrent and test/admission run.)
func TestTemplateFlagsTakeEffect(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.yaml")
	template := filepath.Join(dir, "template.yaml")
	for path, content := range map[string]string{pods: effectsPods, template: effectsTemplate} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	commands := map[string][]string{
		"inject":  {"--local", "-f", pods},
		"policy":  {"policy"},
		"explain": {"explain", "--local", "-f", pods, "-o", "json", "--namespace-labels", "sidecar.kinject.dev/inject=enabled,mesh.sidecar.kinject.dev/inject=enabled"},
	}
	for _, c := range []struct {
		flag []string
		// want is, by command, what its output (stdout and stderr) holds
		// with the flag and not without it; "gone: TEXT", what it holds
		// without the flag only; templateHash, that explain names another
		// template. A command where the flag can have no effect is in
		// noEffect, with why.
		want     map[string]string
		noEffect map[string]string
	}{
		{[]string{"--template", template}, map[string]string{
			"inject": "example.com/flagged:v1", "policy": "example.com/flagged:v1", "explain": templateHash,
		}, nil},
		{[]string{"--mode", "opt-in"}, map[string]string{
			"inject": "pod/plain skipped: not_opted_in", "policy": `"not_opted_in" :`, "explain": `"reason": "not_opted_in"`,
		}, nil},
		{[]string{"--kinds", "Runner", "--pod-template-path", "Runner.example.com=spec.runner.template"}, map[string]string{
			"inject": "pod/plain skipped: kind_not_selected", "policy": "kinds: Runner leaves out Pod", "explain": "kinds: Runner leaves out Pod",
		}, nil},
		{[]string{"--pod-template-path", "Runner.example.com=spec.runner.template"}, map[string]string{
			"inject": "runner.example.com/runner injected",
		}, map[string]string{
			"policy":  "the policy injects Pods only: a custom kind's pod template reaches admission as the Pods its controller creates",
			"explain": "explain says what the policy does to Pods; it leaves a custom kind's object out",
		}},
		{[]string{"--exclude-namespaces", "shop"}, map[string]string{
			"inject": "pod/plain skipped: namespace_not_selected", "policy": "- shop", "explain": `"reason": "namespace_excluded"`,
		}, nil},
		// The default is native: --native=false makes it classic.
		{[]string{"--native=false"}, map[string]string{
			"inject": "{name: envoy, image: ", "policy": `path: "/spec/containers/-"`, "explain": templateHash,
		}, nil},
		{[]string{"--image", "example.com/envoy:flag"}, map[string]string{
			"inject": "example.com/envoy:flag", "policy": "example.com/envoy:flag", "explain": templateHash,
		}, nil},
		{[]string{"--inject-host-network"}, map[string]string{
			"inject": "pod/host injected", "policy": `gone: "host_network" :`, "explain": `gone: "reason": "host_network"`,
		}, nil},
		{[]string{"--template", template, "--strict"}, map[string]string{
			"inject": "privileged", "policy": "privileged", "explain": "privileged",
		}, nil},
		{[]string{"--profile", "mesh"}, map[string]string{
			"inject": "mesh.sidecar.kinject.dev/status", "policy": "mesh.sidecar.kinject.dev", "explain": `"profile": "mesh"`,
		}, nil},
	} {
		for _, command := range []string{"inject", "policy", "explain"} {
			want, ok := c.want[command]
			if _, none := c.noEffect[command]; ok == none {
				t.Errorf("%s %s: want an effect, or a reason in noEffect", strings.Join(c.flag, " "), command)
			}
			if !ok {
				continue
			}
			t.Run(strings.Join(c.flag, " ")+"/"+command, func(t *testing.T) {
				base := runLocal(t, commands[command]...)
				got := runLocal(t, append(append([]string(nil), commands[command]...), c.flag...)...)
				if got == base {
					t.Fatalf("the output is the same with the flag as without it:\n%s", got)
				}
				with, without := got, base
				if gone, ok := strings.CutPrefix(want, "gone: "); ok {
					want, with, without = gone, base, got
				}
				switch {
				case want == templateHash:
					if h, b := explainTemplate.FindString(got), explainTemplate.FindString(base); h == "" || h == b {
						t.Errorf("explain names template %q with the flag, %q without", h, b)
					}
				case !strings.Contains(with, want) || strings.Contains(without, want):
					t.Errorf("want %q with the flag only (gone: without it only)\n--- with:\n%s\n--- without:\n%s", want, got, base)
				}
			})
		}
	}
}

// templateHash stands for explain's effect of a flag that changes the
// template: another template hash in its verdicts.
const templateHash = "another template"

var explainTemplate = regexp.MustCompile(`"template": "[0-9a-f]+"`)

// runLocal runs kubectl inject in-process, reading no cluster, and
// returns what it wrote to stdout and stderr.
func runLocal(t *testing.T, args ...string) string {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	command := NewCmdInject(streams, local.FrontEnd{})
	command.SetArgs(append(args, "--kubeconfig", filepath.Join(t.TempDir(), "none")))
	Execute(command, streams)
	return out.String() + errOut.String()
}
