package helm

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// helm3PostRenderer is the Helm 3 line of docs/gitops.md: kubectl-inject from PATH
// as the exec post-renderer, one --post-renderer-args per argument.
var helm3PostRenderer = []string{"--post-renderer", "kubectl-inject",
	"--post-renderer-args=--local", "--post-renderer-args=-f", "--post-renderer-args=-"}

// TestHelm3PostRenderer runs the chart through Helm 3 with kubectl-inject
// as its post-renderer (`helm template` and `helm install
// --dry-run=client`): the Deployment and the StatefulSet are injected as
// the pipe injects them; the hooks (the migrate Job, the test Pod) stay as
// the chart renders them, since Helm 3 never post-renders hooks
// (helm/helm#7891). A bad template fails with kubectl-inject's message,
// which Helm 3 shows.
func TestHelm3PostRenderer(t *testing.T) {
	helm := tool(t, "helm3")
	env := helmEnv(t, testbin.PluginDir(t))
	plain := parse(t, mustRun(t, env, "", helm, append([]string{"template"}, chartArgs...)...))
	piped := pipe(t, helm, env)
	// What Helm 3 gives: the pipe's objects, but the hooks as rendered.
	var want []object
	for _, o := range piped {
		if !contains(hooks, o.id) {
			want = append(want, o)
		}
	}
	for _, o := range plain {
		if contains(hooks, o.id) {
			want = append(want, o)
		}
	}
	check := func(t *testing.T, what string, got []object) {
		t.Helper()
		if inj := injected(got); !slices.Equal(inj, without(workloads, hooks)) {
			t.Errorf("%s injected %v, want the workloads that are not hooks: %v", what, inj, without(workloads, hooks))
		}
		sameObjects(t, what, got, want)
	}
	t.Run("template", func(t *testing.T) {
		check(t, "helm template", parse(t, mustRun(t, env, "", helm, append(append([]string{"template"}, chartArgs...), helm3PostRenderer...)...)))
	})
	t.Run("install --dry-run=client", func(t *testing.T) {
		// Helm 3 asks the cluster whether it is reachable even then: a real
		// API server answers (test/cluster), and nothing is written to it.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		c, err := cluster.Start(ctx)
		if errors.Is(err, cluster.ErrMissingBinaries) {
			testbin.Missing(t, "helm 3 install --dry-run=client needs an API server: %v", err)
		} else if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
		args := append(append([]string{"install"}, chartArgs...), "--dry-run=client", "-o", "json", "--kubeconfig", c.AdminKubeconfig)
		check(t, "helm install --dry-run=client", releaseObjects(t, mustRun(t, env, "", helm, append(args, helm3PostRenderer...)...)))
	})
	t.Run("bad template", func(t *testing.T) {
		bad := filepath.Join(repoRoot, "test", "helm", "testdata", "bad-template.yaml")
		want := "error: " + bad + ": template: containers: must be a list"
		r := run(t, env, "", helm, append(append([]string{"template"}, chartArgs...), append(helm3PostRenderer, "--post-renderer-args=--template="+bad)...)...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("helm template with a bad template: exit %d\nstderr:\n%s\nwant a non-zero exit and %q", r.code, r.stderr, want)
		}
	})
}
