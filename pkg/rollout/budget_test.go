package rollout

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestInPlaceBudget resolves each kind's maxUnavailable as its controller
// does (a Deployment's percentage rounded down, a StatefulSet's and a
// DaemonSet's up), 0 as 1, and says where the figure comes from.
func TestInPlaceBudget(t *testing.T) {
	for _, tc := range []struct {
		name, obj string
		want      int
		why       string
	}{
		{"deployment default 25% of 8", "kind: Deployment\nspec: {replicas: 8}", 2, "spec.strategy.rollingUpdate.maxUnavailable (default 25%) of 8: 2 at a time"},
		{"deployment default 25% of 3 rounds down to 0", "kind: Deployment\nspec: {replicas: 3}", 1, "spec.strategy.rollingUpdate.maxUnavailable (default 25%) of 3 is 0: one Pod at a time"},
		{"deployment 50% of 100", "kind: Deployment\nspec: {replicas: 100, strategy: {rollingUpdate: {maxUnavailable: 50%}}}", 50, "spec.strategy.rollingUpdate.maxUnavailable 50% of 100: 50 at a time"},
		{"deployment 33% of 10 rounds down", "kind: Deployment\nspec: {replicas: 10, strategy: {rollingUpdate: {maxUnavailable: 33%}}}", 3, ""},
		{"deployment count", "kind: Deployment\nspec: {replicas: 10, strategy: {rollingUpdate: {maxUnavailable: 4}}}", 4, ""},
		{"deployment 0 with surge", "kind: Deployment\nspec: {replicas: 10, strategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}}", 1, "spec.strategy.rollingUpdate.maxUnavailable 0 of 10 is 0: one Pod at a time"},
		{"deployment 0%", "kind: Deployment\nspec: {replicas: 10, strategy: {rollingUpdate: {maxUnavailable: 0%}}}", 1, "spec.strategy.rollingUpdate.maxUnavailable 0% of 10 is 0: one Pod at a time"},
		{"deployment recreate", "kind: Deployment\nspec: {replicas: 10, strategy: {type: Recreate}}", 1, "a Recreate Deployment: one Pod at a time"},
		{"deployment no replicas field", "kind: Deployment\nspec: {strategy: {rollingUpdate: {maxUnavailable: 100%}}}", 1, ""},
		{"deployment bad value", "kind: Deployment\nspec: {replicas: 4, strategy: {rollingUpdate: {maxUnavailable: lots}}}", 1, `spec.strategy.rollingUpdate.maxUnavailable: "lots" is not a count or a percentage: one Pod at a time`},
		{"deployment bad percentage", "kind: Deployment\nspec: {replicas: 4, strategy: {rollingUpdate: {maxUnavailable: x%}}}", 1, `"x%" is not a percentage`},
		{"statefulset default 1", "kind: StatefulSet\nspec: {replicas: 5}", 1, "spec.updateStrategy.rollingUpdate.maxUnavailable (default 1) of 5: 1 at a time"},
		{"statefulset 30% of 5 rounds up", "kind: StatefulSet\nspec: {replicas: 5, updateStrategy: {rollingUpdate: {maxUnavailable: 30%}}}", 2, ""},
		{"statefulset OnDelete", "kind: StatefulSet\nspec: {replicas: 5, updateStrategy: {type: OnDelete}}", 1, ""},
		{"daemonset 10% of 25 scheduled rounds up", "kind: DaemonSet\nspec: {updateStrategy: {rollingUpdate: {maxUnavailable: 10%}}}\nstatus: {desiredNumberScheduled: 25}", 3, ""},
		{"daemonset default", "kind: DaemonSet\nstatus: {desiredNumberScheduled: 25}", 1, ""},
		{"replicaset", "kind: ReplicaSet\nspec: {replicas: 9}", 1, "one Pod at a time"},
		{"pod", "kind: Pod", 1, "one Pod at a time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := InPlaceBudget(object(t, tc.obj))
			if got != tc.want {
				t.Errorf("budget %d, want %d (%s)", got, tc.want, why)
			}
			if tc.why != "" && !strings.Contains(why, tc.why) {
				t.Errorf("says %q, want %q", why, tc.why)
			}
		})
	}
}

// TestInService counts the endpoints that point at the Pod, by name,
// namespace and UID, and those a client sends to (ready, or no ready
// condition).
func TestInService(t *testing.T) {
	slices := []*unstructured.Unstructured{object(t, `
kind: EndpointSlice
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: ns, name: web-a, uid: u1}
- addresses: [10.0.0.2]
  conditions: {ready: false, serving: true}
  targetRef: {kind: Pod, namespace: ns, name: web-b, uid: u2}
- addresses: [10.0.0.3]
  targetRef: {kind: Pod, namespace: ns, name: web-c, uid: u3}
- addresses: [10.0.0.4]
  conditions: {ready: true}
- addresses: [10.0.0.5]
  conditions: {ready: true}
  targetRef: {kind: Node, name: web-a}
`), object(t, `
kind: EndpointSlice
endpoints:
- addresses: [10.0.0.1]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: ns, name: web-a, uid: u1}
- addresses: [10.0.0.9]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: ns, name: web-a, uid: old}
- addresses: [10.0.0.8]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: other, name: web-a}
`)}
	for _, tc := range []struct {
		pod, uid      string
		listed, ready int
	}{
		{"web-a", "u1", 2, 2},
		{"web-b", "u2", 1, 0},
		{"web-c", "u3", 1, 1},
		{"web-d", "u4", 0, 0},
		{"web-a", "", 3, 3},
	} {
		listed, ready := InService(slices, "ns", tc.pod, tc.uid)
		if listed != tc.listed || ready != tc.ready {
			t.Errorf("%s (%s): listed %d, ready %d; want %d, %d", tc.pod, tc.uid, listed, ready, tc.listed, tc.ready)
		}
	}
}

// TestKubeletRestartsSidecarImage: v1.32.0 is the first kubelet that
// restarts a native sidecar whose image changed.
func TestKubeletRestartsSidecarImage(t *testing.T) {
	for _, tc := range []struct {
		version         string
		restarts, known bool
	}{
		{"v1.32.0", true, true},
		{"v1.31.14", false, true},
		{"v1.29.0", false, true},
		{"v1.32.0-eks-1234", true, true},
		{"v1.31.4+k3s1", false, true},
		{"1.33", true, true},
		{"v1.37.2", true, true},
		{"v1.39.1", true, true},
		{"v1.19.0", false, true},
		{"v2.0.0", true, true},
		{"v1.3", false, true},
		{"", true, false},
		{"fake", true, false},
		{"v1.x", true, false},
	} {
		restarts, known := KubeletRestartsSidecarImage(tc.version)
		if restarts != tc.restarts || known != tc.known {
			t.Errorf("%q: restarts %v known %v, want %v %v", tc.version, restarts, known, tc.restarts, tc.known)
		}
	}
}

// TestNotInPlace: a Deployment of one replica, and a Pod on a node whose
// kubelet is older than v1.32.0 when a native sidecar's image changes,
// are recreated; a classic sidecar's image, an unknown version, or
// another kind are not.
func TestNotInPlace(t *testing.T) {
	pods := []*unstructured.Unstructured{
		object(t, "kind: Pod\nmetadata: {name: web-a}\nspec: {nodeName: old}"),
		object(t, "kind: Pod\nmetadata: {name: web-b}\nspec: {nodeName: new}"),
		object(t, "kind: Pod\nmetadata: {name: web-c}\nspec: {nodeName: unknown}"),
	}
	versions := map[string]string{"old": "v1.31.4", "new": "v1.32.0"}
	nodeVersion := func(n string) string { return versions[n] }
	native := func(pod string) Upgrade {
		return Upgrade{Pod: pod, Images: []ImageChange{{Container: "envoy", Init: true, From: "a", To: "b"}}}
	}
	classic := func(pod string) Upgrade {
		return Upgrade{Pod: pod, Images: []ImageChange{{Container: "envoy", From: "a", To: "b"}}}
	}
	deploy := object(t, "kind: Deployment\nspec: {replicas: 2}")
	for _, tc := range []struct {
		name     string
		obj      *unstructured.Unstructured
		upgrades []Upgrade
		nodes    func(string) string
		want     string
	}{
		{"recent kubelet", deploy, []Upgrade{native("web-b")}, nodeVersion, ""},
		{"old kubelet", deploy, []Upgrade{native("web-b"), native("web-a")}, nodeVersion, "kubelet_too_old: Pod web-a runs on node old, whose kubelet v1.31.4 does not restart a native sidecar whose image changed (v1.32.0 and later do)"},
		{"old kubelet, classic sidecar", deploy, []Upgrade{classic("web-a")}, nodeVersion, ""},
		{"old kubelet, only resources", deploy, []Upgrade{{Pod: "web-a"}}, nodeVersion, ""},
		{"unknown version", deploy, []Upgrade{native("web-c")}, nodeVersion, ""},
		{"nodes not readable", deploy, []Upgrade{native("web-a")}, nil, ""},
		{"one replica", object(t, "kind: Deployment\nspec: {replicas: 1}"), []Upgrade{native("web-b")}, nodeVersion, "single_replica: a Deployment of 1 replica"},
		{"one replica, resources alone", object(t, "kind: Deployment\nspec: {replicas: 1}"), []Upgrade{{Pod: "web-b", Resources: []ResourceChange{{Container: "envoy"}}}}, nodeVersion, ""},
		{"one replica, Recreate", object(t, "kind: Deployment\nspec: {replicas: 1, strategy: {type: Recreate}}"), []Upgrade{native("web-b")}, nodeVersion, ""},
		{"one replica StatefulSet", object(t, "kind: StatefulSet\nspec: {replicas: 1}"), []Upgrade{native("web-b")}, nodeVersion, ""},
		{"bare Pod", object(t, "kind: Pod"), []Upgrade{native("web-b")}, nodeVersion, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notInPlace(tc.obj, pods, tc.upgrades, tc.nodes)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDecisions: a verdict is remembered per Pod UID and resourceVersion:
// the same Pod at the same version is not judged again (a change the
// cache cannot see keeps the old verdict), a new version is, and a nil
// Decisions or a Pod without a UID judges every time.
func TestDecisions(t *testing.T) {
	current := injector(t, "envoy:b", true)
	pod := injectedPod(t, injector(t, "envoy:a", true), nil)
	pod.SetUID("u1")
	pod.SetResourceVersion("1")
	d := &Decisions{}
	if u := d.Decide(current, pod); !u.InPlace() || len(u.Images) != 1 {
		t.Fatalf("first verdict %+v, want in place on one image", u)
	}
	// the same UID and version, now current: the remembered verdict stands
	already := injectedPod(t, current, nil)
	already.SetUID("u1")
	already.SetResourceVersion("1")
	if u := d.Decide(current, already); !u.InPlace() {
		t.Errorf("the same version was judged again: %+v", u)
	}
	already.SetResourceVersion("2")
	if u := d.Decide(current, already); u.Reason != ReasonAlreadyCurrent {
		t.Errorf("a new version was not judged again: %+v", u)
	}
	already.SetResourceVersion("1")
	if u := (*Decisions)(nil).Decide(current, already); u.Reason != ReasonAlreadyCurrent {
		t.Errorf("a nil Decisions remembered: %+v", u)
	}
	already.SetUID("")
	if u := d.Decide(current, already); u.Reason != ReasonAlreadyCurrent {
		t.Errorf("a Pod without a UID was remembered: %+v", u)
	}
}
