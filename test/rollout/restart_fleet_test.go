package rollout

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// restartReport is kubectl inject restart -o json.
type restartReport struct {
	MaxInFlight int               `json:"maxInFlight"`
	Done        int               `json:"done"`
	Failed      int               `json:"failed"`
	NotStarted  int               `json:"notStarted"`
	Reported    int               `json:"reported"`
	Interrupted bool              `json:"interrupted"`
	Items       []rollout.Outcome `json:"items"`
}

func parseReport(t testing.TB, r result) restartReport {
	t.Helper()
	var rep restartReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("restart -o json: %v\n%s", err, r.stdout)
	}
	return rep
}

// buildFleet builds the fleet: a namespace injected at admission and
// two injected through their templates, 30 workloads of every kind, and
// waits until they all run.
func buildFleet(t *testing.T, v1 string) (admission, templated1, templated2 string) {
	admission, templated1, templated2 = namespace(t, "adm"), namespace(t, "tpl"), namespace(t, "tpl")
	enableAdmission(t, v1, admission)
	for i := range 6 {
		for _, ns := range []string{admission, templated1, templated2} {
			create(t, ns, deployments, deployment(fmt.Sprintf("web-%d", i), 1, nil, nil))
		}
	}
	for _, ns := range []string{admission, templated1, templated2} {
		create(t, ns, statefulsets, statefulSet("db", 2, "RollingUpdate"))
		create(t, ns, daemonsets, daemonSet("agent"))
	}
	create(t, admission, jobs, job("migrate"))
	create(t, admission, pods, barePod("debug"))
	create(t, admission, cronjobs, cronJob("nightly"))
	create(t, templated1, statefulsets, statefulSet("cache", 2, "OnDelete"))
	create(t, templated1, cronjobs, cronJob("report"))
	create(t, templated1, replicasets, replicaSet("legacy", 2))
	for _, ns := range []string{templated1, templated2} {
		expectCode(t, kinject(t, "deploy,sts,ds,cronjob", "--all", "-n", ns, "--template", v1), 0)
	}
	expectCode(t, kinject(t, "rs/legacy", "-n", templated1, "--template", v1), 0)
	for _, ns := range []string{admission, templated1, templated2} {
		settled(t, ns)
	}
	return admission, templated1, templated2
}

// TestRestartFleet upgrades the template of a fleet of 30 workloads in
// 3 namespaces (Deployments, RollingUpdate and OnDelete StatefulSets,
// DaemonSets, a ReplicaSet, CronJobs, a Job, a bare Pod; some injected at
// admission, some through their templates), and runs kubectl inject
// restart -A --max-in-flight 3: every workload comes to the current
// template, never more than 3 roll at once (recorded from the cluster's
// side), status reports 0 behind, and the bare Pod and the Job are
// reported and left alone.
func TestRestartFleet(t *testing.T) {
	c.Require(t)
	v1, v2 := writeFile(t, "v1.yaml", sidecarV1), writeFile(t, "v2.yaml", sidecarV2)
	admission, templated1, templated2 := buildFleet(t, v1)
	onlyNamespaces(t, admission, templated1, templated2)
	workloads := 0
	for _, r := range statusRows(t, "-A", "--template", v1) {
		if !r.Admission {
			workloads++
		}
	}
	if workloads < 30 {
		t.Fatalf("the fleet has %d workloads, want at least 30", workloads)
	}

	// The upgrade: the policy, and what "current" means for restart.
	expectCode(t, kinject(t, "policy", "--apply", "--template", v2), 0)
	waitPolicy(t, v2, admission)
	plan := kinject(t, "restart", "-A", "--template", v2, "--dry-run")
	expectCode(t, plan, 0)
	t.Logf("plan:\n%s", plan.stdout)

	rec := recordInFlight(t, admission, templated1, templated2)
	start := time.Now()
	r := kinject(t, "restart", "-A", "--max-in-flight", "3", "--template", v2, "-o", "json")
	took := time.Since(start)
	peak, when := rec.stop()
	expectCode(t, r, 0)
	rep := parseReport(t, r)
	t.Logf("restart of %d workloads took %s, %v requests; at most %d rolling at once as the cluster saw it (%s), %d as restart counted",
		rep.Done, took.Round(time.Millisecond), r.requests, peak, when, rep.MaxInFlight)
	if peak > 3 || rep.MaxInFlight > 3 {
		t.Errorf("%d workloads rolled at once (restart counted %d); want at most 3", peak, rep.MaxInFlight)
	}
	if peak < 2 {
		t.Errorf("at most %d workload rolled at once: the waves did not overlap", peak)
	}
	var reported []string
	for _, o := range rep.Items {
		if o.State == rollout.StateReported {
			reported = append(reported, fmt.Sprintf("%s/%s:%s", o.Namespace, o.Ref(), o.Reason))
		} else if o.State != rollout.StateDone {
			t.Errorf("%s/%s: %s %s", o.Namespace, o.Ref(), o.State, o.Message)
		}
	}
	sort.Strings(reported)
	wantReported := fmt.Sprintf("[%[1]s/job.batch/migrate:job %[1]s/pod/debug:bare_pod]", admission)
	if fmt.Sprint(reported) != wantReported {
		t.Errorf("reported %v, want %s", reported, wantReported)
	}
	if rep.Done != workloads-3 { // all but the Job, the bare Pod, and the CronJob of the admission namespace (nothing to do)
		t.Errorf("%d workloads done, want %d", rep.Done, workloads-3)
	}
	for _, line := range []string{"[1/", "started (1 in flight)", "done in", fmt.Sprintf("restart: %d done, 0 failed, 0 not started, 2 left as they are", rep.Done)} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("progress lacks %q", line)
		}
	}

	rows := statusRows(t, "-A", "--template", v2)
	n, which := behind(rows, func(r fleet.Row) bool {
		return r.Namespace == admission && (r.Name == "debug" || r.Name == "migrate" || strings.HasPrefix(r.Name, "migrate-"))
	})
	if n != 0 || len(which) != 0 {
		t.Errorf("%d Pods behind after restart: %v", n, which)
	}
	for _, ns := range []string{admission, templated1, templated2} {
		for _, p := range list(t, ns, pods) {
			if p.GetLabels()["app"] != "debug" && p.GetLabels()["app"] != "migrate" && !hasImage(p, "envoyproxy/envoy:v1.34.0") {
				t.Errorf("Pod %s/%s runs %v", ns, p.GetName(), images(p))
			}
		}
	}
	// Nothing is left to do: a second run starts nothing.
	again := kinject(t, "restart", "-A", "--template", v2)
	expectCode(t, again, 0)
	if !strings.Contains(again.stderr, "restart: 0 workloads to bring to the current template") {
		t.Errorf("second run:\n%s", again.stderr)
	}
}
