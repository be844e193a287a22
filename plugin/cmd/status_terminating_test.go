package cmd

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/config"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestStatusTerminating: terminating Pods get their own column and a line
// on stderr, and --check does not fail on them alone; it still fails on a
// Pod behind, and says how many terminating Pods it left out.
func TestStatusTerminating(t *testing.T) {
	web := fleet.Row{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "web", State: fleet.Current, CurrentTemplate: "h", Pods: 3, PodsTerminating: 1}
	bare := fleet.Row{Namespace: "shop", Kind: "Pod", Name: "debug", State: fleet.Outdated, CurrentTemplate: "h", Bare: true, Terminating: true}
	behind := fleet.Row{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "api", State: fleet.Current, CurrentTemplate: "h", Pods: 2, PodsBehind: 1, PodsTerminating: 2, Restart: "kubectl rollout restart deployment.apps/api -n shop"}
	job := fleet.Row{Namespace: "shop", Kind: "Job", Group: "batch", Name: "once", State: fleet.Current, CurrentTemplate: "h", Pods: 1, PodsBehind: 1}
	admitted := fleet.Row{Namespace: "shop", Kind: "Pod", Name: "web-x", State: fleet.Outdated, CurrentTemplate: "h", Admission: true}
	run := func(rows []fleet.Row, wide bool) (string, string, error) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		o := &StatusOptions{IOStreams: streams, Flags: config.NewFlags(), Check: true, AllNamespaces: wide}
		if wide {
			o.Flags.Output = "wide"
		}
		if err := o.print(rows); err != nil {
			t.Fatal(err)
		}
		err := o.summary(rows)
		return out.String(), errOut.String(), err
	}
	for _, tc := range []struct {
		name          string
		rows          []fleet.Row
		wide          bool // -A -o wide
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
			name:  "a Pod behind too",
			rows:  []fleet.Row{behind, web},
			table: []string{"NAME STATE SIDECAR PODS BEHIND TERMINATING", "deployment.apps/api current <none> 2 1 2", "deployment.apps/web current <none> 3 0 1"},
			stderr: []string{"deployment.apps/api: 2 Pods terminating, counted neither current nor behind", "deployment.apps/api: 1 of 2 Pods run an older sidecar than the template; restart: kubectl rollout restart deployment.apps/api -n shop",
				"deployment.apps/web: 1 Pod terminating, counted neither current nor behind"},
			check: "check: 0 outdated, 1 with Pods behind their template, 0 in error, 0 waiting for a missing reference (0 left as they are and 3 Pods terminating, not counted)",
		},
		{
			name:  "none terminating: the table as it was",
			rows:  []fleet.Row{{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "web", State: fleet.Current, CurrentTemplate: "h", Pods: 3}},
			table: []string{"NAME STATE SIDECAR PODS BEHIND", "deployment.apps/web current <none> 3 0"},
		},
		{
			name:  "all namespaces, wide",
			rows:  []fleet.Row{{Namespace: "shop", Kind: "Deployment", Group: "apps", Name: "web", State: fleet.Current, CurrentTemplate: "h", Pods: 3}},
			wide:  true,
			table: []string{"NAMESPACE NAME STATE SIDECAR PODS BEHIND RECORDED CURRENT VALUES RESTART", "shop deployment.apps/web current <none> 3 0 <none> h <none> <none>"},
		},
		{
			name:   "left as they are: a Job behind, a Pod injected at admission (counted in its workload)",
			rows:   []fleet.Row{job, admitted},
			table:  []string{"NAME STATE SIDECAR PODS BEHIND", "job.batch/once current <none> 1 1", "pod/web-x outdated <none> admission 0"},
			stderr: []string{"job.batch/once: runs an older sidecar than the template, and restart leaves it as it is (job): " + rollout.LeftAloneMessage(rollout.ReasonJob)},
		},
		{
			name:  "a Job waiting for a reference is counted waiting, not left alone",
			rows:  []fleet.Row{{Namespace: "shop", Kind: "Job", Group: "batch", Name: "once", State: fleet.Current, CurrentTemplate: "h", Pods: 1, PodsBehind: 1, WaitingFor: []string{"configmap/proxy"}}},
			table: []string{"NAME STATE SIDECAR PODS BEHIND", "job.batch/once current,waiting:configmap/proxy <none> 1 1"},
			stderr: []string{"job.batch/once: its sidecar needs configmap/proxy, missing from namespace shop: its Pods wait for it (create it there)",
				"job.batch/once: 1 of 1 Pods run an older sidecar than the template; restart: "},
			check: "check: 0 outdated, 1 with Pods behind their template, 0 in error, 1 waiting for a missing reference (0 left as they are and 0 Pods terminating, not counted)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(tc.rows, tc.wide)
			var table []string
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				table = append(table, strings.Join(strings.Fields(line), " "))
			}
			if !slices.Equal(table, tc.table) {
				t.Errorf("table:\n%s\nwant (spaces aside):\n%s", out, strings.Join(tc.table, "\n"))
			}
			// The line naming what is current aside (o.current is not set here).
			var got []string
			for _, line := range strings.Split(stderr, "\n") {
				if line != "" && !strings.HasPrefix(line, "current: ") {
					got = append(got, line)
				}
			}
			if !slices.Equal(got, tc.stderr) {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(tc.stderr, "\n"))
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
