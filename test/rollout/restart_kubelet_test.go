package rollout

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

var nodes = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// onNode places a Deployment manifest's Pods on node.
func onNode(manifest, node string) string {
	return strings.Replace(manifest, "    spec:\n      containers:", "    spec:\n      nodeSelector: {kubernetes.io/hostname: "+node+"}\n      containers:", 1)
}

// setKubeletVersion makes node report version as its kubelet's, and
// restores what it reported when the test ends.
func setKubeletVersion(t *testing.T, node, version string) {
	t.Helper()
	obj, err := client(t).Resource(nodes).Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	was, _, _ := unstructured.NestedString(obj.Object, "status", "nodeInfo", "kubeletVersion")
	patch := func(v string) error {
		data, _ := json.Marshal(map[string]any{"status": map[string]any{"nodeInfo": map[string]any{"kubeletVersion": v}}})
		_, err := client(t).Resource(nodes).Patch(context.Background(), node, types.StrategicMergePatchType, data, metav1.PatchOptions{}, "status")
		return err
	}
	if err := patch(version); err != nil {
		t.Fatalf("set the kubelet version of %s: %v", node, err)
	}
	t.Cleanup(func() {
		if err := patch(was); err != nil {
			t.Errorf("restore the kubelet version of %s: %v", node, err)
		}
	})
}

// TestRestartOldKubelet: before v1.32.0 a kubelet does not restart a
// native sidecar whose image changed. --strategy auto recreates the
// Deployment whose Pods run on a Node reporting kubelet v1.31.4, saying
// why, and upgrades in place the one on a recent Node; --strategy
// in-place reports the first and leaves it.
func TestRestartOldKubelet(t *testing.T) {
	c.Require(t)
	imageA := defaultImage(t)
	const imageB = "registry.example/envoy:b"
	oldNode, newNode := c.Nodes[len(c.Nodes)-1], c.Nodes[0]
	ns := namespace(t, "kv")
	expectCode(t, kinject(t, "policy", "--apply"), 0)
	t.Cleanup(func() { kinject(t, "policy", "--delete") })
	expectCode(t, kinject(t, "enable", ns), 0)
	waitPolicyImage(t, imageA, ns)
	setKubeletVersion(t, oldNode, "v1.31.4")
	setKubeletVersion(t, newNode, "v1.32.0")
	create(t, ns, deployments, onNode(deployment("old", 2, nil, nil), oldNode))
	create(t, ns, deployments, onNode(deployment("new", 2, nil, nil), newNode))
	settled(t, ns)
	onlyNamespaces(t, ns)
	before := podUIDs(t, ns)
	expectCode(t, kinject(t, "policy", "--apply", "--image", imageB), 0)
	waitPolicyImage(t, imageB, ns)

	plans := map[string]map[string]rollout.Step{}
	for _, strategy := range []string{"auto", "in-place"} {
		r := kinject(t, "restart", "-n", ns, "--strategy", strategy, "--dry-run", "-o", "json")
		expectCode(t, r, 0)
		var p struct{ Items []rollout.Step }
		parseJSON(t, r.stdout, &p)
		plans[strategy] = map[string]rollout.Step{}
		for _, s := range p.Items {
			plans[strategy][s.Name] = s
		}
	}
	old, fresh := plans["auto"]["old"], plans["auto"]["new"]
	why := "kubelet_too_old: Pod old-"
	if old.Strategy != rollout.StrategyRecreate || !strings.HasPrefix(old.StrategyReason, why) ||
		!strings.Contains(old.StrategyReason, "runs on node "+oldNode+", whose kubelet v1.31.4 does not restart a native sidecar whose image changed (v1.32.0 and later do)") {
		t.Errorf("auto: old is %s (%s), want recreate: %s...", old.Strategy, old.StrategyReason, why)
	}
	if fresh.Strategy != rollout.StrategyInPlace {
		t.Errorf("auto: new is %s (%s), want in place", fresh.Strategy, fresh.StrategyReason)
	}
	if s := plans["in-place"]["old"]; s.Action != rollout.Report || s.Reason != rollout.ReasonInPlaceNotPossible || !strings.Contains(s.Message+s.StrategyReason, "kubelet_too_old") {
		t.Errorf("in-place: old is %s %s (%s %s), want reported %s naming the kubelet", s.Action, s.Reason, s.Message, s.StrategyReason, rollout.ReasonInPlaceNotPossible)
	}

	r := kinject(t, "restart", "-n", ns, "--drain=false", "-o", "json")
	expectCode(t, r, 0)
	settled(t, ns)
	after := podUIDs(t, ns)
	for name, uid := range before {
		kept := after[name] == uid
		if strings.HasPrefix(name, "new-") != kept {
			t.Errorf("Pod %s kept its UID: %v, want %v (only new's Pods upgraded in place)", name, kept, strings.HasPrefix(name, "new-"))
		}
	}
	for _, p := range list(t, ns, pods) {
		if p.GetDeletionTimestamp() == nil && !hasImage(p, imageB) {
			t.Errorf("Pod %s runs %v, want %s", p.GetName(), images(p), imageB)
		}
	}
}
