package rollout

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// TestPlan gives each kind of row its action.
func TestPlan(t *testing.T) {
	t.Parallel()
	objs := map[string]string{
		"Deployment/rolling": `{kind: Deployment, metadata: {name: rolling, generation: 2}, status: {observedGeneration: 1}}`,
		"Deployment/settled": `{kind: Deployment, metadata: {name: settled, generation: 1}, spec: {replicas: 1}, status: {observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1}}`,
		"StatefulSet/db":     `{kind: StatefulSet, metadata: {name: db}, spec: {updateStrategy: {type: OnDelete}}}`,
	}
	lookup := func(_, kind, name string) *unstructured.Unstructured {
		if m, ok := objs[kind+"/"+name]; ok {
			return object(t, m)
		}
		return nil
	}
	rows := []fleet.Row{
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "old", State: fleet.Outdated, RecordedTemplate: "h1"},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "settled", State: fleet.NotInjected, Pods: 1, PodsBehind: 1},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "rolling", State: fleet.NotInjected, Pods: 2, PodsBehind: 1},
		{Namespace: "a", Kind: "StatefulSet", Group: "apps", Name: "db", State: fleet.Outdated, Pods: 2, PodsBehind: 2},
		{Namespace: "a", Kind: "CronJob", Group: "batch", Name: "nightly", State: fleet.Outdated},
		{Namespace: "a", Kind: "Job", Group: "batch", Name: "once", State: fleet.NotInjected, Pods: 1, PodsBehind: 1},
		{Namespace: "a", Kind: "Pod", Name: "bare", State: fleet.Outdated, Bare: true},
		{Namespace: "a", Kind: "Pod", Name: "settled-x", State: fleet.Outdated, Admission: true},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "fine", State: fleet.Current, Pods: 1},
		{Namespace: "kube-system", Kind: "DaemonSet", Group: "apps", Name: "proxy", State: fleet.Outdated},
	}
	describe := func(steps []Step) string {
		var b strings.Builder
		for _, s := range steps {
			fmt.Fprintf(&b, "%s/%s %s inject=%v %s\n", s.Namespace, s.Ref(), s.Action, s.Inject, s.Reason)
		}
		return b.String()
	}
	got := describe(Plan(rows, lookup, PlanOptions{}))
	want := `a/deployment.apps/old reinject inject=false 
a/deployment.apps/settled restart inject=false 
a/deployment.apps/rolling wait inject=false 
a/statefulset.apps/db delete-pods inject=true 
a/cronjob.batch/nightly reinject inject=false 
a/job.batch/once report inject=false job
a/pod/bare report inject=false bare_pod
kube-system/daemonset.apps/proxy report inject=false system_namespace
`
	if got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
	got = describe(Plan(rows[6:7], lookup, PlanOptions{Recreate: true}))
	if got != "a/pod/bare recreate inject=false \n" {
		t.Errorf("--recreate: %s", got)
	}
}

// TestLeftAlone: bare Pods, Jobs and CronJobs whose template is current
// are left alone (their Pods finish on their own); an outdated CronJob
// and the workloads a restart rolls are not.
func TestLeftAlone(t *testing.T) {
	for _, tc := range []struct {
		row  fleet.Row
		want reason.Code
	}{
		{fleet.Row{Kind: "Pod"}, inject.ReasonBarePod},
		{fleet.Row{Kind: "Job", State: fleet.Outdated}, ReasonJob},
		{fleet.Row{Kind: "CronJob", State: fleet.Current}, ReasonJob},
		{fleet.Row{Kind: "CronJob", State: fleet.Outdated}, ""},
		{fleet.Row{Kind: "Deployment", State: fleet.Outdated}, ""},
		{fleet.Row{Kind: "StatefulSet", State: fleet.Current}, ""},
	} {
		if got := LeftAlone(tc.row); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.row.Kind, tc.row.State, got, tc.want)
		}
	}
}

// TestPlanReports: a row status could not classify is reported as an
// error with its state and message, and a current workload whose Pods wait
// for an object the namespace lacks with what it waits for; restarting
// would help neither.
func TestPlanReports(t *testing.T) {
	t.Parallel()
	rows := []fleet.Row{
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "broken", State: "error:conflict", Message: "container envoy exists"},
		{Namespace: "a", Kind: "Deployment", Group: "apps", Name: "waiting", State: fleet.Current, Pods: 1, WaitingFor: []string{"configmap/envoy", "secret/certs"}},
	}
	var got []string
	for _, s := range Plan(rows, nil, PlanOptions{}) {
		got = append(got, fmt.Sprintf("%s %s %s: %s", s.Ref(), s.Action, s.Reason, s.Message))
	}
	want := []string{
		"deployment.apps/broken report error: error:conflict: container envoy exists",
		"deployment.apps/waiting report missing_reference: the sidecar needs configmap/envoy, secret/certs, which the namespace lacks",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
