package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/plugin/local"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: x}
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: ns}
current-context: ctx
`

// TestRateLimitFlags: --qps and --burst reach the rest.Config every client
// is built from; without them it gets the defaults, 200 and 400; a WrapConfigFn
// set before the command is built still runs.
func TestRateLimitFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args  []string
		qps   float32
		burst int
	}{
		{nil, DefaultQPS, DefaultBurst},
		{[]string{"--qps", "50", "--burst", "300"}, 50, 300},
		{[]string{"--qps=12.5"}, 12.5, DefaultBurst},
		{[]string{"--burst", "7"}, DefaultQPS, 7},
	}
	for _, c := range cases {
		o := NewOptions(genericiooptions.NewTestIOStreamsDiscard(), local.FrontEnd{})
		wrapped := false
		o.ConfigFlags.WrapConfigFn = func(cfg *rest.Config) *rest.Config { wrapped = true; return cfg }
		command := NewCommand(o)
		if err := command.ParseFlags(append([]string{"--kubeconfig", path}, c.args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := o.ConfigFlags.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.WarningHandler == nil {
			t.Errorf("%v: the API server's warnings are not printed", c.args)
		}
		if cfg.QPS != c.qps || cfg.Burst != c.burst || !wrapped {
			t.Errorf("%v: QPS %v, burst %d, earlier wrapper ran %v; want %v, %d, true", c.args, cfg.QPS, cfg.Burst, wrapped, c.qps, c.burst)
		}
	}
}

func TestRateLimitFlagsValidate(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for args, want := range map[string]string{
		"--qps=-1":            "--qps must not be negative",
		"--burst=-5":          "--burst must not be negative",
		"--burst=0":           "--burst must be at least 1 when --qps is above 0",
		"--qps=-1 --burst=-1": "--qps must not be negative\n--burst must not be negative",
	} {
		_, stderr, code := runCmd(t, "", append([]string{"deploy/web"}, strings.Fields(args)...)...)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", args, code, stderr, want)
		}
	}
	stdout, _, _ := runCmd(t, "", "--help")
	for _, flag := range []string{"--qps float", "--burst int"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("help does not list %s", flag)
		}
	}
}
