package cmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/config"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// TestStatusTerminating: terminating Pods get their own column and a line
// on stderr, and --check does not fail on them alone; it still fails on a
// Pod behind, and says how many terminating Pods it left out.
func TestStatusTerminating(t *testing.T) {
	web := fleet.Row{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "web", State: fleet.Current, CurrentTemplate: "h", Pods: 3, PodsTerminating: 1}
	bare := fleet.Row{Namespace: "shop", Kind: "Pod", Name: "debug", State: fleet.Outdated, CurrentTemplate: "h", Bare: true, Terminating: true}
	behind := fleet.Row{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "api", State: fleet.Current, CurrentTemplate: "h", Pods: 2, PodsBehind: 1, PodsTerminating: 2, Restart: "kubectl rollout restart deployment.apps/api -n shop"}
	run := func(rows []fleet.Row) (string, string, error) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		o := &StatusOptions{IOStreams: streams, Flags: config.NewFlags(), Check: true}
		if err := o.print(rows); err != nil {
			t.Fatal(err)
		}
		err := o.summary(rows)
		return out.String(), errOut.String(), err
	}
	for _, tc := range []struct {
		name          string
		rows          []fleet.Row
		table, stderr []string
		check         string
	}{
		{
			name:   "terminating only",
			rows:   []fleet.Row{web, bare},
			table:  []string{"NAME STATE SIDECAR PODS BEHIND TERMINATING", "deployment.apps/web current <none> 3 0 1", "pod/debug outdated <none> - 0 1"},
			stderr: []string{"deployment.apps/web: 1 Pod terminating, counted neither current nor behind", "pod/debug: terminating, counted neither current nor behind"},
		},
		{
			name:   "a Pod behind too",
			rows:   []fleet.Row{behind, web},
			table:  []string{"NAME STATE SIDECAR PODS BEHIND TERMINATING", "deployment.apps/api current <none> 2 1 2"},
			stderr: []string{"deployment.apps/api: 2 Pods terminating, counted neither current nor behind", "deployment.apps/api: 1 of 2 Pods run an older sidecar"},
			check:  "check: 0 outdated, 1 with Pods behind their template, 0 in error, 0 waiting for a missing reference (0 left as they are and 3 Pods terminating, not counted)",
		},
		{
			name:  "none terminating: the table as it was",
			rows:  []fleet.Row{{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "web", State: fleet.Current, CurrentTemplate: "h", Pods: 3}},
			table: []string{"NAME STATE SIDECAR PODS BEHIND", "deployment.apps/web current <none> 3 0"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(tc.rows)
			table := strings.Join(strings.Fields(strings.ReplaceAll(out, "\n", " | ")), " ")
			for _, want := range tc.table {
				if !strings.Contains(table, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			var exit *ExitError
			switch {
			case tc.check == "" && err != nil:
				t.Errorf("--check: %v, want exit 0", err)
			case tc.check != "" && (!errors.As(err, &exit) || exit.Code != 1 || err.Error() != tc.check):
				t.Errorf("--check: %v, want exit 1: %s", err, tc.check)
			}
		})
	}
}
