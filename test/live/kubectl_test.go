package live

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

var (
	scriptOnce sync.Once
	scriptErr  error
)

// pluginDir builds kubectl-inject (with kinject-live beside it) once
// into a directory that also holds the completion script, for kubectl's
// plugin discovery through PATH.
func pluginDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		testbin.Missing(t, "kubectl not in PATH: install kubectl (the README's prerequisites)")
	}
	dir := testbin.PluginDir(t)
	scriptOnce.Do(func() {
		script, err := os.ReadFile("../../plugin/kubectl_complete-inject")
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "kubectl_complete-inject"), script, 0o755)
		}
		scriptErr = err
	})
	if scriptErr != nil {
		t.Fatalf("completion script: %v", scriptErr)
	}
	return dir
}

// kubectl runs the real kubectl as admin with the plugin on PATH.
func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.AdminKubeconfig, "PATH="+pluginDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECACHEDIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	t.Logf("kubectl %s\n%s", strings.Join(args, " "), out)
	return string(out), err
}

// TestKubectlPlugin runs the built binary as "kubectl inject" and completes
// its arguments through kubectl_complete-inject.
func TestKubectlPlugin(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ""))
	out, err := kubectl(t, "", "inject", "deployment/web", "-n", ns)
	if err != nil || !strings.Contains(out, "deployment.apps/web injected") {
		t.Fatalf("kubectl inject: %v\n%s", err, out)
	}
	if out, _ := kubectl(t, "", "inject", "--help"); !strings.Contains(out, "kubectl inject [TYPE") {
		t.Errorf("help does not show the display name:\n%s", out)
	}
	out, err = kubectl(t, "", "__complete", "inject", "-n", ns, "deployments", "")
	if err != nil || !strings.Contains(out, "web\n") {
		t.Errorf("completion of names: %v\n%s", err, out)
	}
	out, _ = kubectl(t, "", "__complete", "inject", "")
	if !strings.Contains(out, "deployments\n") {
		t.Errorf("completion of types:\n%s", out)
	}
}

// TestUserApplyKeepsSidecar is the seed's declarative story: after
// injection, the user's own kubectl apply of their manifest (changed or not)
// keeps the sidecar, client-side and server-side.
func TestUserApplyKeepsSidecar(t *testing.T) {
	c.Require(t)
	cases := []struct {
		name        string
		apply       []string
		injectFlags []string
	}{
		{"client-side apply, patch injection", nil, nil},
		{"server-side apply, patch injection", []string{"--server-side"}, nil},
		{"server-side apply, server-side injection", []string{"--server-side"}, []string{"--server-side"}},
		{"client-side apply, server-side injection", nil, []string{"--server-side"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t)
			manifest := deployment("web", "")
			apply := append([]string{"apply", "-n", ns, "-f", "-"}, tc.apply...)
			if out, err := kubectl(t, manifest, apply...); err != nil {
				t.Fatalf("apply: %v\n%s", err, out)
			}
			r := inject(t, append([]string{"deployment/web", "-n", ns}, tc.injectFlags...)...)
			expectCode(t, r, 0)
			for _, m := range []string{manifest, strings.Replace(strings.Replace(manifest, "nginx:1.27", "nginx:1.28", 1), "replicas: 1", "replicas: 2", 1)} {
				if out, err := kubectl(t, m, apply...); err != nil {
					t.Fatalf("re-apply: %v\n%s", err, out)
				}
				got := get(t, ns, deployments, "web")
				if !hasContainer(t, got, "envoy", "spec", "template", "spec") {
					t.Fatalf("the user's apply removed the sidecar: %v", containerNames(t, got, "spec", "template", "spec"))
				}
				if !strings.Contains(field(t, got, "spec", "template", "metadata", "annotations"), "sidecar.kinject.dev/status") {
					t.Fatal("the user's apply removed the sidecar's record")
				}
			}
			if got := field(t, get(t, ns, deployments, "web"), "spec", "template", "spec", "containers"); !strings.Contains(got, "nginx:1.28") {
				t.Errorf("the user's change did not land:\n%s", got)
			}
			r = inject(t, append([]string{"deployment/web", "-n", ns}, tc.injectFlags...)...)
			expectStderr(t, r, "deployment.apps/web unchanged")
		})
	}
}

// TestClusterRefuses: a cluster that answers but refuses the credentials,
// refuses the user what was asked (impersonation with --as), or whose
// certificate the kubeconfig does not trust, gets one line naming that,
// through kubectl, however many objects were asked for.
func TestClusterRefuses(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ""))
	dir := t.TempDir()
	admin, err := os.ReadFile(c.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	badToken := filepath.Join(dir, "bad-token")
	if err := os.WriteFile(badToken, regexp.MustCompile(`token: \S+`).ReplaceAll(admin, []byte("token: expired")), 0o600); err != nil {
		t.Fatal(err)
	}
	untrusted := filepath.Join(dir, "untrusted")
	ca := otherCA(t)
	if err := os.WriteFile(untrusted, bytes.Replace(admin, []byte("insecure-skip-tls-verify: true"), []byte("certificate-authority-data: "+ca), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	const hint = "; to inject manifest files without a cluster, use --local -f FILE\n"
	at := c.URL + ` (context "admin")`
	cases := []struct {
		name, kubeconfig, want string
		args                   []string
		has                    []string // what the server's own words must say
	}{
		{"wrong token", badToken, "error: the cluster at " + at + " refused the credentials (401 Unauthorized): log in again or renew the kubeconfig's credentials" + hint, nil, nil},
		{"untrusted certificate", untrusted, "error: cannot verify the certificate of the cluster at " + at + ": ", nil, nil},
		{"impersonation refused", c.ViewerKubeconfig, "error: the cluster at " + c.URL + ` (context "viewer") refused access to user "viewer" (403 Forbidden: `,
			[]string{"--as", "bob"}, []string{`User "viewer" cannot impersonate`, "): kubectl inject needs get, list and patch on the objects it injects; ask the cluster's administrator for them (kubectl auth can-i patch deployments says what this user may do)" + hint}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("kubectl", append([]string{"inject", "deployments", "--all", "-n", ns}, tc.args...)...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+tc.kubeconfig, "PATH="+pluginDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECACHEDIR="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			got := stderr.String()
			if err == nil || !strings.HasPrefix(got, tc.want) || strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, hint) {
				t.Errorf("kubectl inject: %v, stderr:\n%s\nwant one line starting %q", err, got, tc.want)
			}
			for _, h := range tc.has {
				if !strings.Contains(got, h) {
					t.Errorf("stderr lacks %q:\n%s", h, got)
				}
			}
		})
	}
}

// otherCA returns the base64 PEM of a CA that signed nothing the test API
// server serves.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not the test cluster's CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
