package helm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// copyExample copies examples/helm into a new git repository with one
// commit, and returns the copy of examples/helm.
func copyExample(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dst := filepath.Join(root, "examples", "helm")
	err := filepath.Walk(example, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(example, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "the example"}} {
		mustRun(t, gitEnv(), "", "git", append([]string{"-C", root}, args...)...)
	}
	return dst
}

// gitVars give git a fixed identity and no user or system config.
var gitVars = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}

func gitEnv() []string { return append(os.Environ(), gitVars...) }

// TestFluxRendered runs the CI route of examples/helm/flux without Flux:
// render.sh (Helm 4 and kubectl inject) finds the committed rendered/web.yaml
// up to date, and stale once the chart's values change; kubectl inject
// --check finds it current; kustomize build rendered, what Flux's
// kustomize-controller runs, gives its objects; flux-kustomization.yaml
// points at it.
func TestFluxRendered(t *testing.T) {
	helm := tool(t, "helm4")
	kustomize := tool(t, "kustomize")
	plugin := testbin.PluginDir(t)
	env := append(append(helmEnv(t, plugin), "HELM="+helm), gitVars...)
	dir := copyExample(t)
	flux := filepath.Join(dir, "flux")

	r := run(t, env, "", filepath.Join(flux, "render.sh"))
	if r.code != 0 || r.stdout != "rendered/ is up to date\n" {
		t.Errorf("render.sh on the committed example: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rendered := filepath.Join(example, "flux", "rendered", "web.yaml")
	objs := parse(t, testbin.ReadFile(t, rendered))
	if inj, want := injected(objs), without(workloads, []string{"Pod/shop/web-test-connection"}); !slices.Equal(inj, want) {
		t.Errorf("rendered/web.yaml injects %v, want %v (the test Pod left out)", inj, want)
	}
	if r := run(t, env, "", filepath.Join(plugin, testbin.Plugin), "--local", "-R", "-f", filepath.Join(example, "flux", "rendered"), "--check"); r.code != 0 {
		t.Errorf("kubectl inject --check on rendered/: exit %d\n%s", r.code, r.stderr)
	}
	sameObjects(t, "kustomize build rendered", parse(t, mustRun(t, env, "", kustomize, "build", filepath.Join(example, "flux", "rendered"))), objs)
	if k := testbin.ReadFile(t, filepath.Join(example, "flux", "flux-kustomization.yaml")); !strings.Contains(k, "\n  path: ./examples/helm/flux/rendered\n") {
		t.Errorf("flux-kustomization.yaml does not point at examples/helm/flux/rendered:\n%s", k)
	}

	values := filepath.Join(dir, "charts", "web", "values.yaml")
	testbin.WriteFile(t, values, strings.Replace(testbin.ReadFile(t, values), "nginx:1.27", "nginx:1.28", 1))
	r = run(t, env, "", filepath.Join(flux, "render.sh"))
	if r.code != 1 || !strings.Contains(r.stderr, "+        image: \"nginx:1.28\"") || !strings.HasSuffix(r.stderr, "rendered/ is stale: run examples/helm/flux/render.sh and commit the result\n") {
		t.Errorf("render.sh after a change of values: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestFluxAdmission: the admission route's command, as the Flux README
// gives it, compiles a policy bound to namespace shop (test/admission
// runs such policies on a real API server).
func TestFluxAdmission(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	out := mustRun(t, helmEnv(t), "", filepath.Join(testbin.PluginDir(t), testbin.Plugin), "policy", "--namespaces", "shop")
	if want := "    namespaceSelector:\n      matchExpressions:\n      - key: kubernetes.io/metadata.name\n        operator: In\n        values:\n        - shop\n"; strings.Count(out, want) != 2 {
		t.Errorf("kubectl inject policy --namespaces shop binds the policies to other namespaces:\n%s", out)
	}
	if readme := testbin.ReadFile(t, filepath.Join(example, "flux", "README.md")); !strings.Contains(readme, "\nkubectl inject policy --namespaces shop --apply\n") {
		t.Error("the Flux README no longer gives the command tested here")
	}
}
