package local

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/config"
)

// TestServe: what Serve runs itself and what it leaves to the full
// command, which must see the command line untouched (nothing written).
func TestServe(t *testing.T) {
	app := filepath.Join(t.TempDir(), "app.yaml")
	testbin.WriteFile(t, app, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n")
	cases := []struct {
		args   []string
		served bool
		code   int
		stderr string
	}{
		{[]string{"--local", "-f", app}, true, 0, "deployment.apps/web injected"},
		{[]string{"--local", "-f", app, "--check"}, true, 1, "check: 1 of 1 objects are not current"},
		{[]string{"--local", "-f", app, "--uninject"}, true, 0, "deployment.apps/web skipped: not_injected"},
		{[]string{"--local", "-f", filepath.Join(t.TempDir(), "none.yaml")}, true, 1, "no such file or directory"},
		{[]string{"deploy/web"}, false, 0, ""},
		{[]string{"-f", app}, false, 0, ""},
		{[]string{"--local"}, false, 0, ""},
		{[]string{"--local", "-f", app, "extra"}, false, 0, ""},
		{[]string{"--local", "-f", app, "--kubeconfig", "x"}, false, 0, ""},
		{[]string{"--local", "-f", app, "-o", "name"}, false, 0, ""},
		{[]string{"--local", "-f", app, "--mode", "sometimes"}, false, 0, ""},
		{[]string{"--local", "-f", app, "-h"}, false, 0, ""},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		code, served := Serve(tc.args, config.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		switch {
		case served != tc.served:
			t.Errorf("%q: served %v, want %v", tc.args, served, tc.served)
		case !served && out.Len()+errOut.Len() > 0:
			t.Errorf("%q: not served but wrote %q %q", tc.args, out.String(), errOut.String())
		case served && (code != tc.code || !strings.Contains(errOut.String(), tc.stderr)):
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.stderr)
		}
	}
}
