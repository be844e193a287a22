package helm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomizeHelm runs kustomize build on examples/helm (helmCharts and the
// inject-fn transformer) with options, Helm 3 as `helm` on PATH (as in
// Argo CD's repo-server) and inject-fn on PATH, and returns the output.
func kustomizeHelm(t *testing.T, options ...string) string {
	t.Helper()
	kustomize := tool(t, "kustomize")
	helm := tool(t, "helm3")
	helmDir := t.TempDir()
	if err := os.Symlink(helm, filepath.Join(helmDir, "helm")); err != nil {
		t.Fatal(err)
	}
	env := helmEnv(t, injectFn(t), helmDir)
	return mustRun(t, env, "", kustomize, append([]string{"build"}, append(options, ".")...)...)
}

// TestKustomizeHelmCharts: `kustomize build --enable-helm
// --enable-alpha-plugins --enable-exec` renders the chart with helmCharts
// and injects it with inject-fn as a transformer: every workload, hooks
// included (they are plain objects to kustomize), as expected.yaml says,
// and the same objects as the pipe.
func TestKustomizeHelmCharts(t *testing.T) {
	got := kustomizeHelm(t, "--enable-helm", "--enable-alpha-plugins", "--enable-exec")
	golden(t, filepath.Join(example, "expected.yaml"), got)
	objs := parse(t, got)
	if inj := injected(objs); !slices.Equal(inj, workloads) {
		t.Errorf("injected %v, want every workload %v", inj, workloads)
	}
	sameObjects(t, "kustomize helmCharts + inject-fn", objs, pipe(t, tool(t, "helm3"), helmEnv(t)))
}

// TestArgoCDHelmRoute: Argo CD renders examples/helm as a kustomize app
// with the kustomize.buildOptions of examples/argocd/argocd-cm.yaml (the
// repo-server has helm on its PATH, and inject-fn from
// examples/argocd/repo-server-patch.yaml): the same output.
func TestArgoCDHelmRoute(t *testing.T) {
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples", "argocd", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	options := strings.Fields(cm.Data["kustomize.buildOptions"])
	if !slices.Contains(options, "--enable-helm") {
		t.Fatalf("argocd-cm.yaml's kustomize.buildOptions %v lack --enable-helm, which helmCharts need", options)
	}
	golden(t, filepath.Join(example, "expected.yaml"), kustomizeHelm(t, options...))
}
