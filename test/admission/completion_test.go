package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestClassicPolicyAndCompletingPods: a policy of a classic sidecar
// (--native=false) on a real API server injects a Pod that restarts
// always, leaves one that runs to completion as created with the core's
// reason in its mark and a warning to the client, and check warns of the
// Job in the enabled namespace, naming the fix.
func TestClassicPolicyAndCompletingPods(t *testing.T) {
	c.Require(t)
	const profile, ns = "cmp", "cmp-jobs"
	tpl := writeFile(t, "classic.yaml", []byte("apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: classic}\nspec:\n  profile: "+profile+"\n  native: false\n"))
	pod := func(name, restartPolicy string) []byte {
		return []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec:\n  restartPolicy: " + restartPolicy + "\n  containers: [{name: app, image: a}]\n")
	}
	applyPolicy(t, tpl, pod("probe", "Always"))

	w, dc := warningClient(t)
	created, err := dc.Resource(pods).Namespace(ns).Create(context.Background(), podFrom(t, pod("once", "Never")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	const message = `spec.restartPolicy: "Never": the pod runs to completion, and classic sidecar "envoy" would keep it running after the app exits (inject a native sidecar: --native, or native: true)`
	ann := created.GetAnnotations()
	if got, want := ann[naming.SkippedAnnotationFor(profile)], "runs_to_completion: "+message; got != want {
		t.Errorf("mark %q, want %q", got, want)
	}
	if _, injected := ann[naming.StatusAnnotationFor(profile)]; injected || len(containerNames(created)) != 1 {
		t.Errorf("a Pod that runs to completion got the classic sidecar: %v", containerNames(created))
	}
	wantWarning := "sidecar not injected by kinject-envoy-" + profile + ": " + message
	// The validating policy may start a moment after the mutating one,
	// which applyPolicy waited for.
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(w.all(), wantWarning) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		_, _ = dc.Resource(pods).Namespace(ns).Create(context.Background(), podFrom(t, pod("once", "Never")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}
	if got := w.all(); !strings.Contains(got, wantWarning) {
		t.Errorf("warnings:\n%s\nwant the core's message", got)
	}

	job := podFrom(t, []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: nightly, namespace: "+ns+"}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: a}]\n"))
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	if _, err := client(t).Resource(jobs).Namespace(ns).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client(t).Resource(jobs).Namespace(ns).Delete(context.Background(), "nightly", metav1.DeleteOptions{})
	})
	out, errOut, code := kubectlInject(t, "check", "--profile", profile, "--native=false")
	want := "template\n" +
		`  [warn] sidecar "envoy" is classic and 1 objects in the enabled namespaces run Pods to completion (job/nightly in ` + ns + `): their Pods are left without it (runs_to_completion)` + "\n" +
		"         hint: kubectl inject policy --apply --native --profile " + profile + " (a native sidecar stops once the app has exited; Kubernetes 1.29+)\n"
	if !strings.Contains(out, want) {
		t.Errorf("check (exit %d) lacks:\n%s\ngot:\n%s%s", code, want, out, errOut)
	}
	// The installed policy is the truth: check reads its configuration
	// (classic), and --native over it is the native sidecar.
	out, _, _ = kubectlInject(t, "check", "--profile", profile)
	if !strings.Contains(out, want) {
		t.Errorf("check of the installed classic policy lacks the warning:\n%s", out)
	}
	out, _, _ = kubectlInject(t, "check", "--profile", profile, "--native")
	if strings.Contains(out, "runs_to_completion") {
		t.Errorf("check with --native warns of Jobs:\n%s", out)
	}
}
