package helm

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// chartArgs render the example chart as release web in namespace shop.
var chartArgs = []string{"web", "charts/web", "--namespace", "shop"}

// pipe is the reference: `helm template` piped into kubectl inject --local
// -f - (with extra flags), parsed.
func pipe(t *testing.T, helm string, env []string, flags ...string) []object {
	t.Helper()
	plain := mustRun(t, env, "", helm, append([]string{"template"}, chartArgs...)...)
	kubectlInject := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	return parse(t, mustRun(t, env, plain, kubectlInject, append([]string{"--local", "-f", "-"}, flags...)...))
}

// checkHelm4 runs the chart through Helm 4 with the installed plugin,
// with `helm template` and `helm install --dry-run=client`: every
// workload, hooks included, is injected, into the same objects as the
// pipe's.
func checkHelm4(t *testing.T, helm string, env []string) {
	t.Helper()
	want := pipe(t, helm, env)
	if got := injected(want); !slices.Equal(got, workloads) {
		t.Fatalf("the pipe injected %v, want every workload %v", got, workloads)
	}
	t.Run("template", func(t *testing.T) {
		got := parse(t, mustRun(t, env, "", helm, append([]string{"template"}, append(chartArgs, "--post-renderer", "kubectl-inject")...)...))
		if inj := injected(got); !slices.Equal(inj, workloads) {
			t.Errorf("injected %v, want every workload, hooks included: %v", inj, workloads)
		}
		sameObjects(t, "helm template --post-renderer kubectl-inject", got, want)
	})
	t.Run("install --dry-run=client", func(t *testing.T) {
		got := releaseObjects(t, mustRun(t, env, "", helm, append([]string{"install"}, append(chartArgs, "--dry-run=client", "-o", "json", "--post-renderer", "kubectl-inject")...)...))
		if inj := injected(got); !slices.Equal(inj, workloads) {
			t.Errorf("injected %v, want every workload, hooks included: %v", inj, workloads)
		}
		sameObjects(t, "helm install --dry-run=client --post-renderer kubectl-inject", got, want)
	})
}

// TestHelm4PluginDirectory installs plugin/helm with `helm plugin install
// DIR`, kubectl-inject on PATH, and runs the chart through it; then the
// plugin's settings and its errors.
func TestHelm4PluginDirectory(t *testing.T) {
	helm := tool(t, "helm4")
	env := helmEnv(t, testbin.PluginDir(t))
	mustRun(t, env, "", helm, "plugin", "install", filepath.Join(repoRoot, "plugin", "helm"))
	checkPluginList(t, helm, env)
	checkHelm4(t, helm, env)

	t.Run("settings", func(t *testing.T) {
		cases := []struct {
			name     string
			args     []string // --post-renderer-args, one flag each
			injected []string
		}{
			{"template", []string{"--template=sidecar.yaml"}, workloads},
			{"opt-in", []string{"--mode=opt-in"}, nil},
			{"native sidecar", []string{"--native"}, workloads},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				args := append([]string{"template"}, append(chartArgs, "--post-renderer", "kubectl-inject")...)
				for _, a := range c.args {
					args = append(args, "--post-renderer-args="+a)
				}
				got := parse(t, mustRun(t, env, "", helm, args...))
				if inj := injected(got); !slices.Equal(inj, c.injected) {
					t.Errorf("injected %v, want %v", inj, c.injected)
				}
				sameObjects(t, "helm template --post-renderer-args "+strings.Join(c.args, " "), got, pipe(t, helm, env, c.args...))
			})
		}
		// The sidecar of the template given, not the embedded Envoy.
		got := mustRun(t, env, "", helm, append([]string{"template"}, append(chartArgs, "--post-renderer", "kubectl-inject", "--post-renderer-args=--template=sidecar.yaml")...)...)
		if !strings.Contains(got, "fluent/fluent-bit:3.2") || strings.Contains(got, "envoyproxy/envoy") {
			t.Errorf("--template=sidecar.yaml did not inject the log shipper alone:\n%s", got)
		}
	})

	t.Run("bad template", func(t *testing.T) {
		bad := filepath.Join(repoRoot, "test", "helm", "testdata", "bad-template.yaml")
		want := "error: " + bad + ": template: containers: must be a list"
		for _, cmd := range []string{"template", "install"} {
			args := append([]string{cmd}, append(chartArgs, "--post-renderer", "kubectl-inject", "--post-renderer-args=--template="+bad)...)
			if cmd == "install" {
				args = append(args, "--dry-run=client")
			}
			r := run(t, env, "", helm, args...)
			if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "kind:") {
				t.Errorf("helm %s with a bad template: exit %d\nstdout:\n%s\nstderr:\n%s\nwant a non-zero exit, nothing rendered, and %q", cmd, r.code, r.stdout, r.stderr, want)
			}
		}
	})

	t.Run("bad document", func(t *testing.T) {
		// A chart whose Deployment holds its containers as a map: the
		// message names the document and the field.
		dir := t.TempDir()
		testbin.WriteFile(t, filepath.Join(dir, "bad", "Chart.yaml"), "apiVersion: v2\nname: bad\nversion: 0.1.0\n")
		testbin.WriteFile(t, filepath.Join(dir, "bad", "templates", "deployment.yaml"),
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  template:\n    spec:\n      containers:\n        name: app\n")
		r := run(t, env, "", helm, "template", "bad", filepath.Join(dir, "bad"), "--post-renderer", "kubectl-inject")
		if r.code == 0 || !strings.Contains(r.stderr, "deployment.apps/bad") || !strings.Contains(r.stderr, "spec.template.spec.containers") {
			t.Errorf("helm template of a bad document: exit %d\nstdout:\n%s\nstderr:\n%s\nwant a non-zero exit and a message naming deployment.apps/bad and spec.template.spec.containers", r.code, r.stdout, r.stderr)
		}
	})
}

// TestHelm4PluginArchive installs the plugin archive `make dist` ships for
// this platform with `helm plugin install --verify=false ARCHIVE` (the
// release signs nothing), with no kubectl-inject on PATH: the plugin runs
// the binaries inside it.
func TestHelm4PluginArchive(t *testing.T) {
	helm := tool(t, "helm4")
	out := t.TempDir()
	const version = "v0.0.0-helmtest"
	platform := runtime.GOOS + "/" + runtime.GOARCH
	mustRun(t, nil, "", "go", "run", filepath.Join(repoRoot, "hack", "dist"), "-version", version, "-commit", "0123abc", "-out", out, "-platforms", platform)
	archive := filepath.Join(out, "kubectl-inject-"+strings.TrimPrefix(version, "v")+"-helm-plugin-"+runtime.GOOS+"-"+runtime.GOARCH+".tgz")
	if !strings.Contains(testbin.ReadFile(t, filepath.Join(out, "checksums.txt")), "  "+filepath.Base(archive)+"\n") {
		t.Errorf("checksums.txt does not list %s", filepath.Base(archive))
	}

	env := helmEnv(t) // nothing of the project's on PATH
	mustRun(t, env, "", helm, "plugin", "install", "--verify=false", archive)
	list := checkPluginList(t, helm, env)
	if !strings.Contains(list, strings.TrimPrefix(version, "v")) {
		t.Errorf("helm plugin list does not show the release's version %s:\n%s", version, list)
	}
	var dataHome string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "HELM_DATA_HOME="); ok {
			dataHome = v
		}
	}
	for _, f := range []string{"plugin.yaml", "kubectl-inject", "kinject-live", "LICENSE"} {
		if _, err := os.Stat(filepath.Join(dataHome, "plugins", "kubectl-inject", f)); err != nil {
			t.Errorf("the installed plugin lacks %s: %v", f, err)
		}
	}
	checkHelm4(t, helm, env)
}

// checkPluginList checks that Helm lists the plugin as a post-renderer, and
// returns the list.
func checkPluginList(t *testing.T, helm string, env []string) string {
	t.Helper()
	list := mustRun(t, env, "", helm, "plugin", "list")
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "kubectl-inject" && slices.Contains(f, "postrenderer/v1") {
			return list
		}
	}
	t.Errorf("helm plugin list shows no kubectl-inject postrenderer/v1:\n%s", list)
	return list
}
