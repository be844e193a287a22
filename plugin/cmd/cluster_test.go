package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoCluster: without a cluster, a live command line fails with one
// line that names the cause and points to --local, whatever the number of
// objects or documents, and with no client-go log lines.
func TestNoCluster(t *testing.T) {
	dir := t.TempDir()
	none := filepath.Join(dir, "none")
	unreachable := filepath.Join(dir, "unreachable")
	if err := os.WriteFile(unreachable, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(manifest, []byte(app+"---\n"+app), 0o644); err != nil {
		t.Fatal(err)
	}
	const hint = "; to inject manifest files without a cluster, use --local -f FILE\n"
	noConfig := "error: no cluster configured: no kubeconfig found (looked for " + none + "; set KUBECONFIG or --kubeconfig) and no --server given" + hint
	refused := `error: cannot reach the cluster at https://127.0.0.1:1 (context "ctx"): connection refused (is it running, and is this the right context?)` + hint
	cases := []struct {
		name       string
		kubeconfig string
		args       []string
		want       string
	}{
		{"no kubeconfig", none, []string{"deploy/web"}, noConfig},
		{"no kubeconfig, files", none, []string{"-f", manifest}, noConfig},
		{"no kubeconfig, verbose", none, []string{"deploy/web", "-v=0"}, noConfig},
		{"unreachable", unreachable, []string{"deploy/web"}, refused},
		{"unreachable, files", unreachable, []string{"-f", manifest, "--dry-run=server"}, refused},
		{"unknown context", unreachable, []string{"deploy/web", "--context", "nope"},
			"error: read kubeconfig namespace: invalid configuration: context was not found for specified context: nope\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", c.kubeconfig)
			stdout, stderr, code := runCmd(t, "", c.args...)
			if code != 1 || stdout != "" || stderr != c.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", code, stdout, stderr, c.want)
			}
		})
	}
}
