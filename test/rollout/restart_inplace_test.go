package rollout

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// upgradedInPlace is the default profile's in-place marker.
var upgradedInPlace = rollout.UpgradedInPlaceAnnotation("")

var pdbs = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

func parseJSON(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
}

// podUIDs maps the Pods of ns by name to their UIDs, terminating ones
// left out.
func podUIDs(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range list(t, ns, pods) {
		if p.GetDeletionTimestamp() == nil {
			out[p.GetName()] = string(p.GetUID())
		}
	}
	return out
}

// pdb is a PodDisruptionBudget of at most one Pod of app unavailable.
func pdb(app string) string {
	return fmt.Sprintf(`apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: %[1]s}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: %[1]s}}
`, app)
}

// TestRestartInPlace upgrades a fleet after policy --apply --image B:
// a Deployment injected at admission (with a PodDisruptionBudget of
// maxUnavailable 1) and an OnDelete StatefulSet injected through its
// template have every Pod upgraded in place, keeping its UID, on B and
// marked, and so has a Pod without a controller injected at admission; a
// Deployment injected through its template rolls and is
// recreated, and the plan says so and why. status -A --check then exits
// 0.
func TestRestartInPlace(t *testing.T) {
	c.Require(t)
	imageA := defaultImage(t)
	const imageB = "registry.example/envoy:b"
	adm, tpl := namespace(t, "adm"), namespace(t, "tpl")
	expectCode(t, kinject(t, "policy", "--apply"), 0)
	t.Cleanup(func() { kinject(t, "policy", "--delete") })
	expectCode(t, kinject(t, "enable", adm), 0)
	waitPolicyImage(t, imageA, adm)
	create(t, adm, deployments, deployment("web", 3, nil, nil))
	create(t, adm, pdbs, pdb("web"))
	create(t, adm, pods, barePod("solo"))
	create(t, tpl, deployments, deployment("api", 1, nil, nil))
	create(t, tpl, statefulsets, statefulSet("db", 2, "OnDelete"))
	expectCode(t, kinject(t, "deploy,sts", "--all", "-n", tpl), 0)
	expectCode(t, kinject(t, "restart", "statefulset.apps/db", "-n", tpl), 0)
	settled(t, adm)
	settled(t, tpl)
	onlyNamespaces(t, adm, tpl)
	before := map[string]map[string]string{adm: podUIDs(t, adm), tpl: podUIDs(t, tpl)}

	expectCode(t, kinject(t, "policy", "--apply", "--image", imageB), 0)
	waitPolicyImage(t, imageB, adm)

	plan := kinject(t, "restart", "-A", "--dry-run", "-o", "json")
	expectCode(t, plan, 0)
	var p struct{ Items []rollout.Step }
	parseJSON(t, plan.stdout, &p)
	strategies := map[string]string{}
	for _, s := range p.Items {
		strategies[s.Ref()] = s.Strategy + ": " + s.StrategyReason
	}
	for ref, want := range map[string]string{
		"deployment.apps/web": "in-place: injected at admission; the 3 Pods behind differ from the current template only in the sidecar's image",
		"statefulset.apps/db": "in-place: updateStrategy OnDelete; the 2 Pods behind differ from the current template only in the sidecar's image",
		"deployment.apps/api": "recreate: the template carries the sidecar and the Deployment rolls on a template change",
		"pod/solo":            "in-place: a Pod without a controller; the 1 Pods behind differ from the current template only in the sidecar's image",
	} {
		if strategies[ref] != want {
			t.Errorf("plan: %s: %q, want %q", ref, strategies[ref], want)
		}
	}

	// kwok runs no proxy to drain: --drain=false (the drain is tested on
	// the real node, test/node)
	r := kinject(t, "restart", "-A", "--max-in-flight", "2", "--drain=false", "-o", "json")
	expectCode(t, r, 0)
	rep := parseReport(t, r)
	if rep.Done != 4 {
		t.Errorf("%d done, want 4:\n%s", rep.Done, r.stderr)
	}
	for _, ns := range []string{adm, tpl} {
		after := podUIDs(t, ns)
		for _, pod := range list(t, ns, pods) {
			name := pod.GetName()
			if !hasImage(pod, imageB) || hasImage(pod, imageA) {
				t.Errorf("%s/%s runs %v, want %s", ns, name, images(pod), imageB)
			}
			inPlace := !strings.HasPrefix(name, "api-")
			if got := before[ns][name] == after[name]; got != inPlace {
				t.Errorf("%s/%s kept its UID: %v, want %v", ns, name, got, inPlace)
			}
			if _, marked := pod.GetAnnotations()[upgradedInPlace]; marked != inPlace {
				t.Errorf("%s/%s marked upgraded in place: %v, want %v", ns, name, marked, inPlace)
			}
		}
		if len(after) != len(before[ns]) {
			t.Errorf("%s: %d Pods, had %d", ns, len(after), len(before[ns]))
		}
	}
	expectCode(t, kinject(t, "status", "-A", "--check"), 0)
	ex := kinject(t, "explain", "-n", tpl, "pod/db-0")
	if !strings.Contains(ex.stdout+ex.stderr, "sidecar:  current (upgraded in place)") {
		t.Errorf("explain pod/db-0 does not say it was upgraded in place:\n%s%s", ex.stdout, ex.stderr)
	}
}

// TestRestartInPlaceRollsBack: the new image never becomes Ready (kwok
// holds it, ImagePullBackOff): the first Pod is rolled back to its old
// image, in place, nothing more starts, and restart exits 1 naming the
// Pod, the container and the kubelet's reason.
func TestRestartInPlaceRollsBack(t *testing.T) {
	c.Require(t)
	imageA := defaultImage(t)
	const imageC = "registry.example/envoy:broken"
	ns := namespace(t, "rb")
	expectCode(t, kinject(t, "policy", "--apply"), 0)
	t.Cleanup(func() { kinject(t, "policy", "--delete") })
	expectCode(t, kinject(t, "enable", ns), 0)
	waitPolicyImage(t, imageA, ns)
	for i := range 3 {
		// two replicas each: a Deployment of one is recreated (single_replica)
		create(t, ns, deployments, deployment(fmt.Sprintf("app-%d", i), 2, nil, map[string]string{cluster.HoldImageAnnotation: imageC}))
	}
	settled(t, ns)
	onlyNamespaces(t, ns)
	before := podUIDs(t, ns)
	expectCode(t, kinject(t, "policy", "--apply", "--image", imageC), 0)
	waitPolicyImage(t, imageC, ns)

	plan := kinject(t, "restart", "-n", ns, "--dry-run", "-o", "json")
	expectCode(t, plan, 0)
	var p struct{ Items []rollout.Step }
	parseJSON(t, plan.stdout, &p)
	for _, s := range p.Items {
		if s.Strategy != rollout.StrategyInPlace {
			t.Errorf("%s planned %s (%s), want in place", s.Ref(), s.Strategy, s.StrategyReason)
		}
	}
	start := time.Now()
	r := kinject(t, "restart", "-n", ns, "--max-in-flight", "1", "--progress-deadline", "4s", "--drain=false", "-o", "json")
	expectCode(t, r, 1)
	rep := parseReport(t, r)
	if rep.Failed != 1 || rep.NotStarted != 2 || rep.Done != 0 {
		t.Errorf("%d done, %d failed, %d not started; want 0, 1, 2\n%s", rep.Done, rep.Failed, rep.NotStarted, r.stderr)
	}
	var failed rollout.Outcome
	for _, o := range rep.Items {
		if o.State == rollout.StateFailed {
			failed = o
		}
	}
	pod := ""
	for name := range before {
		// the first Pod upgraded is the highest name
		if strings.HasPrefix(name, failed.Name+"-") && name > pod {
			pod = name
		}
	}
	for _, want := range []string{
		"deployment.apps/" + failed.Name + " in " + ns + ": rolled_back: Pod " + pod + ": not Ready on its new sidecar within 4s: container envoy (" + imageC + "): ImagePullBackOff",
		"rolled back to envoy=" + imageA,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	eventually(t, time.Minute, "every Pod Ready on "+imageA, func() bool {
		for _, p := range list(t, ns, pods) {
			if !rollout.PodReady(&p) || !hasImage(p, imageA) {
				return false
			}
		}
		return true
	})
	var names []string
	for _, p := range list(t, ns, pods) {
		names = append(names, p.GetName())
		if before[p.GetName()] != string(p.GetUID()) {
			t.Errorf("Pod %s was created again", p.GetName())
		}
		if _, marked := p.GetAnnotations()[upgradedInPlace]; marked {
			t.Errorf("Pod %s is still marked upgraded in place", p.GetName())
		}
	}
	sort.Strings(names)
	t.Logf("rolled back %s in %s; Pods %v", pod, time.Since(start).Round(time.Second), names)
}

// TestRestartInPlaceBudget: a PodDisruptionBudget that allows no
// disruption holds the upgrade in place of the Pods it selects: check
// warns about it, and restart waits on it until --progress-deadline,
// then exits 1 naming it, with the Pod untouched.
func TestRestartInPlaceBudget(t *testing.T) {
	c.Require(t)
	imageA := defaultImage(t)
	const imageB = "registry.example/envoy:b"
	ns := namespace(t, "pdb")
	expectCode(t, kinject(t, "policy", "--apply"), 0)
	t.Cleanup(func() { kinject(t, "policy", "--delete") })
	expectCode(t, kinject(t, "enable", ns), 0)
	waitPolicyImage(t, imageA, ns)
	create(t, ns, deployments, deployment("idle", 2, nil, nil))
	create(t, ns, pdbs, strings.Replace(pdb("idle"), "maxUnavailable: 1", "minAvailable: 2", 1))
	settled(t, ns)
	eventually(t, time.Minute, "the PodDisruptionBudget's status", func() bool {
		expected, _, _ := unstructured.NestedInt64(get(t, ns, pdbs, "idle").Object, "status", "expectedPods")
		return expected == 2
	})
	onlyNamespaces(t, ns)
	check := kinject(t, "check")
	if want := "1 PodDisruptionBudgets allow no disruption (poddisruptionbudget/idle in " + ns + ")"; !strings.Contains(check.stdout, want) {
		t.Errorf("check does not warn %q:\n%s", want, check.stdout)
	}
	before := podUIDs(t, ns)
	expectCode(t, kinject(t, "policy", "--apply", "--image", imageB), 0)
	waitPolicyImage(t, imageB, ns)

	r := kinject(t, "restart", "-n", ns, "--progress-deadline", "3s", "--drain=false")
	expectCode(t, r, 1)
	if want := "deployment.apps/idle in " + ns + ": progress_deadline_exceeded: no progress for 3s (PodDisruptionBudget idle allows no disruption of Pod "; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	for _, p := range list(t, ns, pods) {
		if !hasImage(p, imageA) || before[p.GetName()] != string(p.GetUID()) {
			t.Errorf("Pod %s was changed: %v", p.GetName(), images(p))
		}
	}
}
