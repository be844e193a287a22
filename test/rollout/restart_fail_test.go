package rollout

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// TestRestartStopsAtFailure restarts 8 Deployments injected at admission,
// 2 at a time, one of which never gets Ready once restarted (kwok holds
// its new Pods NotReady): its progress deadline passes, the run starts
// nothing more, lets the one in flight finish, exits 1 naming it and the
// reason, and leaves the workloads not yet started untouched. Once the
// workload is fixed, a second run goes on with what is still behind and
// completes.
func TestRestartStopsAtFailure(t *testing.T) {
	c.Require(t)
	v1, v2 := writeFile(t, "v1.yaml", sidecarV1), writeFile(t, "v2.yaml", sidecarV2)
	ns := namespace(t, "f")
	enableAdmission(t, v1, ns)
	slow := map[string]string{cluster.ReadyAfterAnnotation: "2s"}
	for i := range 8 {
		if i == 1 {
			d := deployment("app-1", 1, map[string]string{cluster.HoldLabel: cluster.HoldRestarted}, nil)
			create(t, ns, deployments, strings.Replace(d, "progressDeadlineSeconds: 30", "progressDeadlineSeconds: 6", 1))
			continue
		}
		create(t, ns, deployments, deployment(fmt.Sprintf("app-%d", i), 1, nil, slow))
	}
	settled(t, ns)
	expectCode(t, kinject(t, "policy", "--apply", "--template", v2), 0)
	waitPolicy(t, v2, ns)

	r := kinject(t, "restart", "-n", ns, "--max-in-flight", "2", "--template", v2, "-o", "json")
	expectCode(t, r, 1)
	for _, want := range []string{
		"deployment.apps/app-1 in " + ns + ": progress_deadline_exceeded",
		"restart: starting nothing more; waiting for the ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	rep := parseReport(t, r)
	if rep.Failed != 1 || rep.NotStarted == 0 || rep.Done == 0 {
		t.Errorf("report: %d done, %d failed, %d not started; want some done, app-1 failed, some not started", rep.Done, rep.Failed, rep.NotStarted)
	}
	for _, o := range rep.Items {
		d := get(t, ns, deployments, o.Name)
		_, tmplRestarted, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", cluster.RestartedAtAnnotation)
		switch {
		case o.State == "not-started" && tmplRestarted:
			t.Errorf("%s was not started but was restarted", o.Name)
		case o.State == "not-started" && o.Reason != "not_started":
			t.Errorf("%s: reason %q", o.Name, o.Reason)
		case o.State == "done" && !tmplRestarted:
			t.Errorf("%s is done but was not restarted", o.Name)
		case o.State == "failed" && o.Name != "app-1":
			t.Errorf("%s failed: %s", o.Name, o.Message)
		}
	}

	// The fix: app-1's Pods no longer ask to be held.
	patch := `[{"op": "remove", "path": "/spec/template/metadata/labels/` + strings.ReplaceAll(cluster.HoldLabel, "/", "~1") + `"}]`
	if _, err := client(t).Resource(deployments).Namespace(ns).Patch(context.Background(), "app-1", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	again := kinject(t, "restart", "-n", ns, "--max-in-flight", "2", "--template", v2)
	expectCode(t, again, 0)
	if n, which := behind(statusRows(t, "-n", ns, "--template", v2), nil); n != 0 {
		t.Errorf("%d Pods behind after the second run: %v", n, which)
	}
}
