package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomizeBuild runs `kustomize build DIR OPTIONS...`, compares the
// output with expected, then builds the output again through the same
// transformer and requires the same output: the second run changes
// nothing.
func kustomizeBuild(t *testing.T, dir, transformer, expected string, options ...string) {
	t.Helper()
	kustomize := need(t, "kustomize")
	out := mustRun(t, filepath.Dir(dir), kustomize, append([]string{"build", filepath.Base(dir)}, options...)...)
	golden(t, expected, out)

	again := t.TempDir()
	writeFile(t, filepath.Join(again, "resources.yaml"), out)
	b, err := os.ReadFile(filepath.Join(dir, transformer))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(again, "inject.yaml"), string(b))
	writeFile(t, filepath.Join(again, "kustomization.yaml"), "resources:\n- resources.yaml\ntransformers:\n- inject.yaml\n")
	if second := mustRun(t, filepath.Dir(again), kustomize, append([]string{"build", filepath.Base(again)}, options...)...); second != out {
		t.Errorf("building the output again changed it:\n--- first\n%s\n--- second\n%s", out, second)
	}
}

func TestKustomizeExec(t *testing.T) {
	dir := example("kustomize-exec")
	kustomizeBuild(t, dir, "inject.yaml", filepath.Join(dir, "expected.yaml"), "--enable-alpha-plugins", "--enable-exec")
}

func TestKustomizeContainer(t *testing.T) {
	need(t, "kustomize")
	image(t)
	dir := example("kustomize-container")
	kustomizeBuild(t, dir, "inject.yaml", filepath.Join(dir, "expected.yaml"), "--enable-alpha-plugins")
}

// TestArgoCD runs the build Argo CD's repo-server runs: kustomize build
// with the kustomize.buildOptions of argocd-cm.yaml, inject-fn on PATH.
func TestArgoCD(t *testing.T) {
	dir := example("argocd")
	b, err := os.ReadFile(filepath.Join(dir, "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := yaml.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	options := strings.Fields(cm.GetDataMap()["kustomize.buildOptions"])
	if len(options) == 0 {
		t.Fatal("argocd-cm.yaml: data.kustomize.buildOptions is empty")
	}
	kustomizeBuild(t, filepath.Join(dir, "app"), "inject.yaml", filepath.Join(dir, "expected.yaml"), options...)
}

// TestCI runs the CI check script: it passes on the committed example,
// and fails, showing the diff, once an app changes without re-rendering.
func TestCI(t *testing.T) {
	kustomize := need(t, "kustomize")
	injectFn(t)
	dir := copyDir(t, example("ci"))
	gitInit(t, dir)
	env := "KUSTOMIZE=" + kustomize
	r := runEnv(t, dir, []string{env}, "./check.sh")
	if *update {
		b, err := os.ReadFile(filepath.Join(dir, "rendered", "app.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join(example("ci"), "rendered", "app.yaml"), string(b))
		return
	}
	if r.code != 0 {
		t.Fatalf("check.sh on the committed example: exit %d (rendered/app.yaml stale? run -update)\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runEnv(t, dir, []string{env}, "./check.sh"); r.code != 0 {
		t.Fatalf("check.sh, second run: exit %d\n%s", r.code, r.stderr)
	}

	deployment := filepath.Join(dir, "app", "deployment.yaml")
	b, err := os.ReadFile(deployment)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, deployment, strings.Replace(string(b), "nginx:1.27", "nginx:1.28", 1))
	r = runEnv(t, dir, []string{env}, "./check.sh")
	if r.code == 0 || !strings.Contains(r.stderr, "rendered/ is stale") || !strings.Contains(r.stderr, "+      - image: nginx:1.28") {
		t.Errorf("check.sh after an unrendered change: exit %d, want a failure with the diff\n%s", r.code, r.stderr)
	}
}
