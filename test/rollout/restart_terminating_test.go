package rollout

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// holdFinalizer keeps a deleted Pod Terminating until the test removes
// it: kwok deletes a Pod at once, where a kubelet honours the grace
// period and the sidecar's preStop hook first.
const holdFinalizer = "kinject.dev/test-hold"

// TestRestartWaitsForTerminatingPod holds the old Pod of two Deployments
// Terminating with a finalizer. The Deployments' own status calls their
// rollouts complete (a ReplicaSet counts no terminating Pod), but a
// rollout is done when no old Pod is left: restart fails one at
// --progress-deadline naming the Pod, and does not return for the other
// until its Pod is gone. Meanwhile status counts the Pods as terminating,
// not behind, and --check exits 0; right after restart returns, so does it.
func TestRestartWaitsForTerminatingPod(t *testing.T) {
	c.Require(t)
	v1, v2 := writeFile(t, "v1.yaml", sidecarV1), writeFile(t, "v2.yaml", sidecarV2)
	ns := namespace(t, "t")
	for _, name := range []string{"web", "stuck"} {
		create(t, ns, deployments, deployment(name, 1, nil, nil))
	}
	expectCode(t, kinject(t, "deploy", "--all", "-n", ns, "--template", v1), 0)
	settled(t, ns)
	web, stuck := onlyPod(t, ns, "web"), onlyPod(t, ns, "stuck")
	hold(t, ns, web, stuck)

	// The deadline bounds the wait: the old Pod is named.
	r := kinject(t, "restart", "deploy/stuck", "-n", ns, "--template", v2, "--progress-deadline", "3s")
	expectCode(t, r, 1)
	for _, want := range []string{"deployment.apps/stuck in " + ns + ": progress_deadline_exceeded", "1 old Pod is terminating: " + stuck} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("restart at a 3s deadline: stderr lacks %q", want)
		}
	}

	done := make(chan result, 1)
	go func() { done <- kinject(t, "restart", "deploy/web", "-n", ns, "--template", v2) }()
	eventually(t, time.Minute, "the rollout of web to be complete by its status, its old Pod terminating", func() bool {
		d := get(t, ns, deployments, "web")
		d.SetKind("Deployment")
		return strings.Contains(fmt.Sprint(d.Object["spec"]), "v1.34.0") && rollout.Status(d).Done && terminatingPod(t, ns, web)
	})
	select {
	case r := <-done:
		t.Fatalf("restart returned (exit %d) while the old Pod %s was terminating", r.code, web)
	case <-time.After(3 * time.Second):
	}

	for _, name := range []string{"web", "stuck"} {
		row := statusRow(t, statusRows(t, "-n", ns, "--template", v2), name)
		if row.Pods != 1 || row.PodsBehind != 0 || row.PodsTerminating != 1 || row.NeedsAttention() {
			t.Errorf("status of %s while its old Pod is terminating: %d Pods, %d behind, %d terminating; want 1, 0, 1", name, row.Pods, row.PodsBehind, row.PodsTerminating)
		}
	}
	st := kinject(t, "status", "-n", ns, "--template", v2, "--check")
	expectCode(t, st, 0)
	if !strings.Contains(st.stdout, "TERMINATING") || !strings.Contains(st.stderr, "deployment.apps/web: 1 Pod terminating, counted neither current nor behind") {
		t.Errorf("status does not report the terminating Pods:\n%s%s", st.stdout, st.stderr)
	}

	release(t, ns, web)
	select {
	case r := <-done:
		expectCode(t, r, 0)
	case <-time.After(time.Minute):
		t.Fatalf("restart did not return within a minute of the old Pod's release")
	}
	if _, err := client(t).Resource(pods).Namespace(ns).Get(context.Background(), web, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("restart returned, but the old Pod %s is still there (get: %v)", web, err)
	}
	expectCode(t, kinject(t, "status", "-n", ns, "--template", v2, "--check"), 0)
	if row := statusRow(t, statusRows(t, "-n", ns, "--template", v2), "web"); row.Pods != 1 || row.PodsBehind != 0 || row.PodsTerminating != 0 {
		t.Errorf("status of web after restart: %d Pods, %d behind, %d terminating; want 1, 0, 0", row.Pods, row.PodsBehind, row.PodsTerminating)
	}
}

// onlyPod returns the name of the one Pod of Deployment name, once the
// Pods of its earlier templates are gone.
func onlyPod(t *testing.T, ns, name string) string {
	t.Helper()
	var found []string
	eventually(t, time.Minute, "Deployment "+name+" to have one Pod", func() bool {
		found = nil
		for _, p := range list(t, ns, pods) {
			if p.GetLabels()["app"] == name {
				found = append(found, p.GetName())
			}
		}
		return len(found) == 1
	})
	return found[0]
}

// hold puts holdFinalizer on the Pods, and removes it when the test ends,
// so that the namespace can go.
func hold(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		patchPod(t, ns, name, `{"metadata": {"finalizers": ["`+holdFinalizer+`"]}}`)
	}
	t.Cleanup(func() {
		for _, name := range names {
			_, _ = client(t).Resource(pods).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata": {"finalizers": null}}`), metav1.PatchOptions{})
		}
	})
}

// release removes holdFinalizer: the API server removes the Pod.
func release(t *testing.T, ns, name string) {
	t.Helper()
	patchPod(t, ns, name, `{"metadata": {"finalizers": null}}`)
}

func patchPod(t *testing.T, ns, name, patch string) {
	t.Helper()
	if _, err := client(t).Resource(pods).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch Pod %s/%s: %v", ns, name, err)
	}
}

// terminatingPod reports a Pod that exists with its deletionTimestamp set.
func terminatingPod(t *testing.T, ns, name string) bool {
	t.Helper()
	p, err := client(t).Resource(pods).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil && p.GetDeletionTimestamp() != nil
}

// statusRow is the row of Deployment name.
func statusRow(t *testing.T, rows []fleet.Row, name string) fleet.Row {
	t.Helper()
	for _, r := range rows {
		if r.Kind == "Deployment" && r.Name == name {
			return r
		}
	}
	t.Fatalf("no row for deployment %s among %v", name, rows)
	return fleet.Row{}
}

// TestRestartRecreateWaitsForReady: restart --recreate is done with a bare
// Pod once the Pod it deleted is gone and the one it created is Ready,
// as for a Pod a controller replaces; one that never gets Ready fails at
// --progress-deadline.
func TestRestartRecreateWaitsForReady(t *testing.T) {
	c.Require(t)
	v1, v2 := writeFile(t, "v1.yaml", sidecarV1), writeFile(t, "v2.yaml", sidecarV2)
	ns := namespace(t, "r")
	create(t, ns, pods, barePod("debug"))
	held := strings.Replace(barePod("held"), "labels: {app: held}", `labels: {app: held, "`+cluster.HoldLabel+`": "`+cluster.HoldNever+`"}`, 1)
	create(t, ns, pods, held)
	for _, name := range []string{"debug", "held"} {
		expectCode(t, kinject(t, "pod/"+name, "-n", ns, "--recreate", "--template", v1), 0)
	}

	r := kinject(t, "restart", "pod/debug", "-n", ns, "--recreate", "--template", v2)
	expectCode(t, r, 0)
	p := get(t, ns, pods, "debug")
	if !hasImage(*p, "envoyproxy/envoy:v1.34.0") || !rollout.PodReady(p) {
		t.Errorf("restart returned with Pod debug running %v, Ready %v; want the v2 sidecar, Ready", images(*p), rollout.PodReady(p))
	}

	r = kinject(t, "restart", "pod/held", "-n", ns, "--recreate", "--template", v2, "--progress-deadline", "3s")
	expectCode(t, r, 1)
	for _, want := range []string{"pod/held in " + ns + ": progress_deadline_exceeded", "waiting for the Pod created again to be Ready"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("restart of a Pod that never gets Ready: stderr lacks %q", want)
		}
	}
}

// TestRestartOnDeleteWaitsForTerminatingPod: a ReplicaSet without a
// Deployment (its Pods replaced only when deleted) has an old Pod already
// terminating, deleted before restart ran (by a run that was stopped, or
// by someone else), and held by a finalizer. restart does not delete it
// again, and does not return until it is gone, its other old Pod deleted
// and replaced.
func TestRestartOnDeleteWaitsForTerminatingPod(t *testing.T) {
	c.Require(t)
	v1, v2 := writeFile(t, "v1.yaml", sidecarV1), writeFile(t, "v2.yaml", sidecarV2)
	ns := namespace(t, "o")
	create(t, ns, replicasets, replicaSet("cache", 1))
	expectCode(t, kinject(t, "rs/cache", "-n", ns, "--template", v1), 0)
	going := onlyPod(t, ns, "cache")
	hold(t, ns, going)
	if err := client(t).Resource(pods).Namespace(ns).Delete(context.Background(), going, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the ReplicaSet to replace the Pod deleted", func() bool {
		for _, p := range list(t, ns, pods) {
			if p.GetName() != going && rollout.PodReady(&p) {
				return true
			}
		}
		return false
	})

	done := make(chan result, 1)
	go func() { done <- kinject(t, "restart", "rs/cache", "-n", ns, "--template", v2) }()
	eventually(t, time.Minute, "restart to inject the ReplicaSet", func() bool {
		return strings.Contains(fmt.Sprint(get(t, ns, replicasets, "cache").Object["spec"]), "v1.34.0")
	})
	select {
	case r := <-done:
		t.Fatalf("restart returned (exit %d) while the old Pod %s was terminating", r.code, going)
	case <-time.After(5 * time.Second):
	}
	if !terminatingPod(t, ns, going) {
		t.Fatalf("Pod %s is no longer terminating while held", going)
	}

	release(t, ns, going)
	select {
	case r := <-done:
		expectCode(t, r, 0)
	case <-time.After(time.Minute):
		t.Fatalf("restart did not return within a minute of the old Pod's release")
	}
	left := list(t, ns, pods)
	if len(left) != 1 || left[0].GetDeletionTimestamp() != nil || !hasImage(left[0], "envoyproxy/envoy:v1.34.0") {
		var got []string
		for _, p := range left {
			got = append(got, fmt.Sprintf("%s %v terminating=%v", p.GetName(), images(p), p.GetDeletionTimestamp() != nil))
		}
		t.Errorf("restart returned with Pods %v; want one, running the v2 sidecar", got)
	}
}
