package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestRestartAfterPolicyUpgrade is the upgrade a user makes with flags
// only: a fleet on the embedded default (Deployments of 2 namespaces
// injected at admission, 3 Deployments and an OnDelete StatefulSet
// injected through their templates, a bare Pod and a Job), then kubectl
// inject policy --apply --image B. kubectl inject restart -A
// --max-in-flight 2 --strategy recreate, with no template flag, reads
// "current" from the installed policy and brings every Pod to B, never
// more than 2 in flight, every Pod created again (so that the admission
// Pods compared below are the policy's own; TestRestartInPlace upgrades
// them in place); kubectl inject status -A --check then exits 0, and names the
// bare Pod and the Job, which restart left alone.
func TestRestartAfterPolicyUpgrade(t *testing.T) {
	c.Require(t)
	def, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	imageA := defaultImage(t)
	const imageB = "registry.example/envoy:b"
	b, err := inject.New(inject.DefaultTemplate(), inject.Settings{Image: imageB})
	if err != nil {
		t.Fatal(err)
	}

	adm1, adm2, tpl := namespace(t, "adm"), namespace(t, "adm"), namespace(t, "tpl")
	expectCode(t, kinject(t, "policy", "--apply"), 0)
	t.Cleanup(func() { kinject(t, "policy", "--delete") })
	for _, ns := range []string{adm1, adm2} {
		expectCode(t, kinject(t, "enable", ns), 0)
	}
	waitPolicyImage(t, imageA, adm1, adm2)
	for _, ns := range []string{adm1, adm2} {
		create(t, ns, deployments, deployment("web", 2, nil, nil))
	}
	create(t, adm1, pods, barePod("debug"))
	create(t, adm1, jobs, job("migrate"))
	for i := range 3 {
		create(t, tpl, deployments, deployment(fmt.Sprintf("api-%d", i), 1, nil, nil))
	}
	create(t, tpl, statefulsets, statefulSet("db", 2, "OnDelete"))
	expectCode(t, kinject(t, "deploy,sts", "--all", "-n", tpl), 0)
	// The OnDelete StatefulSet's Pods keep running without the sidecar
	// until deleted: the command status names does it.
	expectCode(t, kinject(t, "restart", "statefulset.apps/db", "-n", tpl), 0)
	for _, ns := range []string{adm1, adm2, tpl} {
		settled(t, ns)
	}
	onlyNamespaces(t, adm1, adm2, tpl)
	st := kinject(t, "status", "-A", "--check")
	expectCode(t, st, 0)
	wantCurrent := fmt.Sprintf("current: template %s of the default profile (mutatingadmissionpolicy/kinject-envoy)", def.TemplateHash())
	if !strings.Contains(st.stderr, wantCurrent) {
		t.Errorf("status before the upgrade does not say %q:\n%s", wantCurrent, st.stderr)
	}

	// The upgrade, by a flag.
	expectCode(t, kinject(t, "policy", "--apply", "--image", imageB), 0)
	waitPolicyImage(t, imageB, adm1, adm2)
	expectCode(t, kinject(t, "status", "-A", "--check"), 1)

	const maxInFlight = 2
	rec := recordInFlight(t, adm1, adm2, tpl)
	r := kinject(t, "restart", "-A", "--max-in-flight", strconv.Itoa(maxInFlight), "--strategy", "recreate", "-o", "json")
	peak, when := rec.stop()
	expectCode(t, r, 0)
	wantCurrent = fmt.Sprintf("current: template %s of the default profile (mutatingadmissionpolicy/kinject-envoy)", b.TemplateHash())
	if !strings.Contains(r.stderr, wantCurrent) {
		t.Errorf("restart does not say %q:\n%s", wantCurrent, r.stderr)
	}
	rep := parseReport(t, r)
	t.Logf("restart: %d done, at most %d rolling at once as the cluster saw it (%s), %d as restart counted", rep.Done, peak, when, rep.MaxInFlight)
	var done, reported []string
	for _, o := range rep.Items {
		switch o.State {
		case rollout.StateDone:
			done = append(done, o.Namespace+"/"+o.Ref())
		case rollout.StateReported:
			reported = append(reported, fmt.Sprintf("%s/%s:%s", o.Namespace, o.Ref(), o.Reason))
		default:
			t.Errorf("%s/%s: %s %s", o.Namespace, o.Ref(), o.State, o.Message)
		}
	}
	sort.Strings(done)
	sort.Strings(reported)
	// Sorted as done is: the namespaces' numbers ("adm-9", "adm-10")
	// depend on how many the tests before made.
	wantDone := strings.Fields(fmt.Sprintf("%[1]s/deployment.apps/web %[2]s/deployment.apps/web %[3]s/deployment.apps/api-0 %[3]s/deployment.apps/api-1 %[3]s/deployment.apps/api-2 %[3]s/statefulset.apps/db", adm1, adm2, tpl))
	sort.Strings(wantDone)
	if fmt.Sprint(done) != fmt.Sprint(wantDone) {
		t.Errorf("done %v, want %s", done, wantDone)
	}
	// Each of the workloads takes seconds to roll, and the next starts as
	// soon as a slot is free: maxInFlight at once, never more.
	wantInFlight := min(maxInFlight, len(wantDone))
	if rep.Done != len(wantDone) || rep.MaxInFlight != wantInFlight || peak != wantInFlight {
		t.Errorf("restart: %d done, %d rolling at once as the cluster saw it, %d as restart counted; want %d, %d and %d",
			rep.Done, peak, rep.MaxInFlight, len(wantDone), wantInFlight, wantInFlight)
	}
	wantReported := fmt.Sprintf("[%[1]s/job.batch/migrate:job %[1]s/pod/debug:bare_pod]", adm1)
	if fmt.Sprint(reported) != wantReported {
		t.Errorf("reported %v, want %s", reported, wantReported)
	}
	for _, ns := range []string{adm1, adm2, tpl} {
		for _, p := range list(t, ns, pods) {
			app := p.GetLabels()["app"]
			want := imageB
			if app == "debug" || app == "migrate" {
				want = imageA // left alone
			}
			if !hasImage(p, want) {
				t.Errorf("Pod %s/%s (%s) runs %v, want %s", ns, p.GetName(), app, images(p), want)
			}
		}
	}

	// The Pods the policy injected carry the ServiceAccount token volume
	// the API server adds before the policy runs: the core, given such a
	// Pod without its sidecar, gives it back as the policy did.
	withToken := 0
	for _, ns := range []string{adm1, adm2} {
		for _, p := range list(t, ns, pods) {
			if p.GetLabels()["app"] != "web" {
				continue
			}
			stored, err := json.Marshal(p.Object)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(stored), `"kube-api-access-`) {
				t.Errorf("Pod %s/%s has no kube-api-access volume: is ServiceAccount admission on?", ns, p.GetName())
				continue
			}
			withToken++
			plain, entries := b.ProcessText(inject.OpUninject, stored, 0)
			if len(entries) != 1 || entries[0].Action != inject.Uninjected {
				t.Fatalf("Pod %s/%s: uninject: %v", ns, p.GetName(), entries)
			}
			again, entries := b.ProcessText(inject.OpInject, plain, 0)
			if len(entries) != 1 || entries[0].Action != inject.Injected {
				t.Fatalf("Pod %s/%s: inject: %v", ns, p.GetName(), entries)
			}
			// As the API server stores the core's Pod (defaults, the token
			// mount in every container): a dry run under another name.
			probe := &unstructured.Unstructured{}
			if err := probe.UnmarshalJSON(again); err != nil {
				t.Fatal(err)
			}
			probe.SetName(p.GetName() + "-core")
			probe.SetUID("")
			probe.SetResourceVersion("")
			probe.SetCreationTimestamp(metav1.Time{})
			probe.SetManagedFields(nil)
			delete(probe.Object, "status")
			unstructured.RemoveNestedField(probe.Object, "spec", "nodeName")
			got, err := client(t).Resource(pods).Namespace(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatalf("Pod %s/%s as the core injects it: %v", ns, p.GetName(), err)
			}
			for _, field := range [][]string{{"metadata", "annotations"}, {"metadata", "labels"}, {"spec"}} {
				g, _, _ := unstructured.NestedFieldCopy(got.Object, field...)
				w, _, _ := unstructured.NestedFieldCopy(p.Object, field...)
				if m, ok := w.(map[string]any); ok && field[0] == "spec" {
					delete(m, "nodeName")
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("Pod %s/%s: %v as the core injects it differs from the policy's:\n%v\nstored:\n%v", ns, p.GetName(), field, g, w)
				}
			}
		}
	}
	if withToken != 4 {
		t.Errorf("%d admission-injected Pods with a token volume compared, want 4", withToken)
	}

	st = kinject(t, "status", "-A", "--check")
	expectCode(t, st, 0)
	if n := strings.Count(st.stderr, "restart leaves it as it is"); n != 2 {
		t.Errorf("status names %d objects left as they are, want the bare Pod and the Job:\n%s", n, st.stderr)
	}
	for _, line := range []string{
		"pod/debug: runs an older sidecar than the template, and restart leaves it as it is (bare_pod)",
		"job.batch/migrate: runs an older sidecar than the template, and restart leaves it as it is (job)",
		wantCurrent,
	} {
		if !strings.Contains(st.stderr, line) {
			t.Errorf("status -A --check after the restart lacks %q:\n%s", line, st.stderr)
		}
	}
}

// defaultImage is the image of the embedded default's sidecar.
func defaultImage(t testing.TB) string {
	t.Helper()
	tpl := inject.DefaultTemplate()
	for _, c := range append(tpl.InitContainers, tpl.Containers...) {
		for i := 0; i+1 < len(c.Content); i += 2 {
			if c.Content[i].Value == "image" {
				return c.Content[i+1].Value
			}
		}
	}
	t.Fatal("the embedded default has no image")
	return ""
}
