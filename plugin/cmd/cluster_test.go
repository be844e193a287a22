package cmd

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
		{"no kubeconfig, --server", none, []string{"deploy/web", "--server", "https://127.0.0.1:1"},
			"error: cannot reach the cluster at https://127.0.0.1:1: connection refused (is it running, and is this the right context?)" + hint},
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

// TestClusterForbidden: a cluster that accepts the credentials but
// refuses the first request (403) gets one line that names the user when
// the server does, what the server refused, what kubectl inject needs and
// the --local hint.
func TestClusterForbidden(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"the server names the user",
			`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden: User \"jane\" cannot get path \"/version\"","reason":"Forbidden","code":403}`,
			`refused access to user "jane" (403 Forbidden: User "jane" cannot get path "/version")`},
		{"a proxy that says only forbidden", "access denied\n",
			`refused access (403 Forbidden: access denied)`},
		{"a proxy's page", "<html>\n<body>\n<h1>Forbidden</h1>\n" + strings.Repeat("You may not. ", 20) + "\n</body>\n</html>\n",
			`refused access (403 Forbidden: <html> <body> <h1>Forbidden</h1> ` + strings.Repeat("You may not. ", 12) + `You may not...)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(c.body, "{") {
					w.Header().Set("Content-Type", "application/json")
				}
				w.WriteHeader(http.StatusForbidden)
				_, _ = io.WriteString(w, c.body)
			}))
			defer server.Close()
			config := filepath.Join(t.TempDir(), "config")
			forbidding := strings.Replace(kubeconfig, `{server: "https://127.0.0.1:1"}`, `{server: "`+server.URL+`", insecure-skip-tls-verify: true}`, 1)
			if err := os.WriteFile(config, []byte(forbidding), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("KUBECONFIG", config)
			want := "error: the cluster at " + server.URL + ` (context "ctx") ` + c.want +
				": kubectl inject needs get, list and patch on the objects it injects; ask the cluster's administrator for them (kubectl auth can-i patch deployments says what this user may do)" +
				"; to inject manifest files without a cluster, use --local -f FILE\n"
			stdout, stderr, code := runCmd(t, "", "deploy/web")
			if code != 1 || stdout != "" || stderr != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and:\n%s", code, stdout, stderr, want)
			}
		})
	}
}
