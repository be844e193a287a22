package cmd

import (
	"strings"
	"testing"
)

// TestNamespaceNamesValidated: every flag that takes a namespace refuses a
// name that is not one, naming the flag and the value, before any file or
// cluster is read.
func TestNamespaceNamesValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"policy --namespaces with a negation", []string{"policy", "--namespaces", "shop,!kube-system"},
			`--namespaces: namespace "!kube-system" is not a valid name: lower-case letters, digits and '-', at most 63 characters (to leave a namespace out, use --exclude-namespaces kube-system)`},
		{"policy --exclude-namespaces upper case", []string{"policy", "--exclude-namespaces", "Legacy"}, `--exclude-namespaces: namespace "Legacy" is not a valid name`},
		{"check --namespaces", []string{"check", "--namespaces", "a_b", "--kubeconfig", "/nonexistent"}, `--namespaces: namespace "a_b" is not a valid name`},
		{"live -n", []string{"deploy/web", "-n", "!kube-system"}, `--namespace: namespace "!kube-system" is not a valid name`},
		{"enable", []string{"enable", "shop", "Shop", "--kubeconfig", "/nonexistent"}, `namespace: namespace "Shop" is not a valid name`},
		{"--local --exclude-namespaces", []string{"--local", "-f", "-", "--exclude-namespaces", "x y"}, `--exclude-namespaces: namespace "x y" is not a valid name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := runCmd(t, app, tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %q", code, stderr, tc.want)
			}
		})
	}
}

// TestExcludeNamespacesLocal: --exclude-namespaces skips the objects of a
// namespace in --local, with the core's reason.
func TestExcludeNamespacesLocal(t *testing.T) {
	t.Parallel()
	in := strings.Replace(app, "  name: web # keep me\n", "  name: web # keep me\n  namespace: legacy\n", 1)
	out, stderr, code := runCmd(t, in, "--local", "-f", "-", "--exclude-namespaces", "legacy")
	if code != 0 || out != in || !strings.Contains(stderr, "skipped: namespace_not_selected") {
		t.Errorf("exit %d, stderr %q, output changed: %v", code, stderr, out != in)
	}
	out, _, code = runCmd(t, in, "--local", "-f", "-", "--exclude-namespaces", "other")
	if code != 0 || !strings.Contains(out, "name: envoy") {
		t.Errorf("another namespace excluded: exit %d, not injected:\n%s", code, out)
	}
}
