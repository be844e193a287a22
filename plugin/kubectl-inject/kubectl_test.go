package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// kubectlRun runs the real kubectl with the built plugin (kubectl-inject
// and kinject-live, as make build and the archives lay them out) first on
// PATH, and returns the exit code, stdout and stderr.
func kubectlRun(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	kubectl := testbin.NeedTool(t, "kubectl")
	cmd := exec.Command(kubectl, args...)
	cmd.Env = append(os.Environ(), "PATH="+testbin.PluginDir(t)+string(os.PathListSeparator)+filepath.Dir(kubectl),
		"HOME="+t.TempDir(), "KUBECACHEDIR="+t.TempDir(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	cmd.Env = append(cmd.Env, env...)
	code, stdout, stderr := testbin.Exec(t, cmd)
	return code, stdout, stderr
}

// TestPluginList: kubectl sees one plugin, inject, although two binaries
// lie on PATH: the helper's name has no kubectl- prefix.
func TestPluginList(t *testing.T) {
	code, stdout, stderr := kubectlRun(t, nil, "plugin", "list", "--name-only")
	if code != 0 || strings.Count(stdout, "\nkubectl-inject\n") != 1 || strings.Contains(stdout, "kinject-live") || stderr != "" {
		t.Errorf("kubectl plugin list: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// klogLine is a line of client-go's log (kubectl's -v output).
var klogLine = regexp.MustCompile(`(?m)^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ [a-z_]+\.go:[0-9]+\] `)

// TestKubectlConventions runs `kubectl inject` as a user meets it first:
// -v is log verbosity as in kubectl (never --version), no cluster is one
// line naming the cause, with no client-go log lines unless -v asks.
func TestKubectlConventions(t *testing.T) {
	dir := t.TempDir()
	unreachable := filepath.Join(dir, "kubeconfig")
	testbin.WriteFile(t, unreachable, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n"+
		"users:\n- name: u\n  user: {token: x}\ncontexts:\n- name: ctx\n  context: {cluster: c, user: u}\ncurrent-context: ctx\n")
	none := filepath.Join(dir, "none")
	// A file whose second document does not parse: line 16, column 16.
	broken := filepath.Join(dir, "broken.yaml")
	const good = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
	testbin.WriteFile(t, broken, good+"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {a: [}\n")
	yamlError := broken + ":16:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n"
	app := filepath.Join(testbin.ModuleRoot(), "examples", "cli", "app.yaml")
	const hint = "; to inject manifest files without a cluster, use --local -f FILE\n"
	refused := `error: cannot reach the cluster at https://127.0.0.1:1 (context "ctx"): connection refused (is it running, and is this the right context?)` + hint
	cases := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr string // exact, after the klog lines; "" for none
		klog   bool   // whether client-go's log lines come first
	}{
		{name: "no kubeconfig", env: []string{"KUBECONFIG=" + none}, args: []string{"inject", "deploy/web"}, code: 1,
			stderr: "error: no cluster configured: no kubeconfig found (looked for " + none + "; set KUBECONFIG or --kubeconfig) and no --server given" + hint},
		{name: "no kubeconfig, a file of objects", env: []string{"KUBECONFIG=" + none}, args: []string{"inject", "-f", app}, code: 1,
			stderr: "error: no cluster configured: no kubeconfig found (looked for " + none + "; set KUBECONFIG or --kubeconfig) and no --server given" + hint},
		{name: "unreachable", env: []string{"KUBECONFIG=" + unreachable}, args: []string{"inject", "-f", app}, code: 1, stderr: refused},
		{name: "unreachable, -v=6", env: []string{"KUBECONFIG=" + unreachable}, args: []string{"inject", "deploy/web", "-v=6"}, code: 1, stderr: refused, klog: true},
		{name: "unreachable, --v 6", env: []string{"KUBECONFIG=" + unreachable}, args: []string{"inject", "--v", "6", "deploy/web"}, code: 1, stderr: refused, klog: true},
		{name: "-v is not --version", args: []string{"inject", "-v"}, code: 1, stderr: "error: flag needs an argument: 'v' in -v\n"},
		{name: "YAML error", args: []string{"inject", "--local", "-f", broken}, code: 1,
			stderr: broken + ": deployment.apps/web injected\n" + yamlError +
				"error: 1 of 2 objects failed; the output holds them as they were in the input\n"},
		{name: "YAML error, in place", args: []string{"inject", "--local", "-f", broken, "--in-place"}, code: 1,
			stderr: broken + ": deployment.apps/web would be injected (not written)\n" + yamlError +
				"error: 1 of 2 objects failed, so no file was changed (fix them, or add --continue-on-error to write the others)\n"},
		{name: "--local with -v", args: []string{"inject", "--local", "-f", app, "-v=6", "--check"}, code: 1,
			stderr: app + ": deployment.apps/web would be injected\n" + app + ": service/web skipped: not_a_workload\n" + app + ": cronjob.batch/report skipped: opted_out\n" +
				"error: check: 1 of 3 objects are not current (1 would change, 0 failed)\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := kubectlRun(t, c.env, c.args...)
			logged := klogLine.FindAllStringIndex(stderr, -1)
			rest := stderr
			if len(logged) > 0 {
				end := logged[len(logged)-1][1]
				rest = stderr[end+strings.IndexByte(stderr[end:], '\n')+1:]
			}
			if code != c.code || rest != c.stderr || (len(logged) > 0) != c.klog {
				t.Errorf("exit %d, %d log lines, stderr:\n%s\nwant exit %d, log lines %v, then:\n%s", code, len(logged), stderr, c.code, c.klog, c.stderr)
			}
		})
	}
	if code, stdout, _ := kubectlRun(t, nil, "inject", "--version"); code != 0 || !strings.HasPrefix(stdout, "kubectl-inject v0.0.0-dev") {
		t.Errorf("kubectl inject --version: exit %d, %q; want the untagged version v0.0.0-dev...", code, stdout)
	}
}
