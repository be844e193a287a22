package cmd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestEnableNamespaces: enable and disable label each namespace named
// with one merge patch of the profile's label, report it line by line
// (unchanged when it already is as asked, a warning for a system
// namespace, an error for one not there, which fails the run after the
// others), print what they wrote with --output, and with --dry-run change
// nothing (client) or ask the API server not to (server).
func TestEnableNamespaces(t *testing.T) {
	t.Parallel()
	namespace := func(name string, enabled bool) *unstructured.Unstructured {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
		if enabled {
			ns.SetLabels(map[string]string{"sidecar.kinject.dev/inject": "enabled", "team": "a"})
		}
		return ns
	}
	for _, tc := range []struct {
		name         string
		enable       bool
		dryRun       string
		output       string
		names        []string
		stdout       string
		stderr, err  string
		labels       map[string]string // the namespaces' label afterwards ("" for none)
		patches      int
		serverDryRun bool
	}{
		{name: "enable", enable: true, dryRun: "none", output: "name", names: []string{"shop", "on", "kube-system", "gone"},
			stdout: "namespace/shop\nnamespace/on\nnamespace/kube-system\n",
			stderr: "namespace/shop enabled (sidecar.kinject.dev/inject=enabled)\n" +
				"namespace/on unchanged\n" +
				"Warning: kube-system is a system namespace: the policy leaves it out whatever its labels; to inject there, apply the policy with --namespaces kube-system\n" +
				"namespace/kube-system enabled (sidecar.kinject.dev/inject=enabled)\n" +
				"error: namespace \"gone\": not found (create it first: kubectl create namespace gone)\n",
			err:    "1 of 4 namespaces failed",
			labels: map[string]string{"shop": "enabled", "on": "enabled", "kube-system": "enabled"}, patches: 2},
		{name: "disable", dryRun: "none", names: []string{"on", "shop"},
			stderr: "namespace/on disabled (sidecar.kinject.dev/inject removed)\nnamespace/shop unchanged\n",
			labels: map[string]string{"shop": "", "on": ""}, patches: 1},
		{name: "client dry run", enable: true, dryRun: "client", output: "yaml", names: []string{"shop"},
			stdout: "apiVersion: v1\nkind: Namespace\nmetadata:\n  labels:\n    sidecar.kinject.dev/inject: enabled\n  name: shop\n",
			stderr: "namespace/shop enabled (sidecar.kinject.dev/inject=enabled) (dry run)\n",
			labels: map[string]string{"shop": ""}},
		{name: "server dry run", dryRun: "server", names: []string{"on"},
			stderr: "namespace/on disabled (sidecar.kinject.dev/inject removed) (server dry run)\n",
			labels: map[string]string{"on": ""}, patches: 1, serverDryRun: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{namespacesResource: "NamespaceList"},
				namespace("shop", false), namespace("on", true), namespace("kube-system", false))
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := &NamespaceOptions{IOStreams: streams, Enable: tc.enable, DryRun: tc.dryRun, Output: tc.output, FieldManager: "kubectl-inject", namespaces: tc.names}
			err := o.run(context.Background(), client)
			var exit *ExitError
			if tc.err == "" && err != nil || tc.err != "" && (!errors.As(err, &exit) || exit.Code != 1 || err.Error() != tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if out.String() != tc.stdout || errOut.String() != tc.stderr {
				t.Errorf("stdout:\n%s\nstderr:\n%s\nwant:\n%s\nand:\n%s", out.String(), errOut.String(), tc.stdout, tc.stderr)
			}
			var patches []k8stesting.PatchAction
			for _, a := range client.Actions() {
				if p, ok := a.(k8stesting.PatchAction); ok {
					patches = append(patches, p)
				}
			}
			if len(patches) != tc.patches {
				t.Errorf("%d PATCHes, want %d", len(patches), tc.patches)
			}
			for _, p := range patches {
				opts := p.(k8stesting.PatchActionImpl).PatchOptions
				if opts.FieldManager != "kubectl-inject" || slices.Equal(opts.DryRun, []string{"All"}) != tc.serverDryRun {
					t.Errorf("PATCH %s by %q, dry run %v", p.GetPatch(), opts.FieldManager, opts.DryRun)
				}
			}
			if tc.serverDryRun {
				return // the fake API server does not know dry runs
			}
			for name, want := range tc.labels {
				stored, err := client.Tracker().Get(namespacesResource, "", name)
				if err != nil {
					t.Fatal(err)
				}
				if got := stored.(*unstructured.Unstructured).GetLabels()["sidecar.kinject.dev/inject"]; got != want || strings.Contains(name, "on") && stored.(*unstructured.Unstructured).GetLabels()["team"] != "a" {
					t.Errorf("namespace %s: label %q (labels %v), want %q and its other labels kept", name, got, stored.(*unstructured.Unstructured).GetLabels(), want)
				}
			}
		})
	}
}
