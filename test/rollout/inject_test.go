package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// workloads are a Deployment (3 replicas, each Ready a second after it
// starts, so the rollout can be watched), a RollingUpdate StatefulSet and
// a DaemonSet (one Pod per Node).
const workloads = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {` + cluster.ReadyAfterAnnotation + `: 1s}
    spec:
      containers: [{name: web, image: nginx:1.27, ports: [{containerPort: 8080}]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres:17}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: fluent/fluent-bit:3.2}]
`

// TestInjectRollsOut injects a Deployment, a StatefulSet and a DaemonSet
// that run their Pods: kubectl rollout status completes for each, the old
// Pods are gone, every new Pod has the sidecar, and status shows the
// Deployment's Pods behind falling to 0 as its rollout proceeds.
func TestInjectRollsOut(t *testing.T) {
	c.Require(t)
	ns := namespace(t, "r")
	v1 := writeFile(t, "v1.yaml", sidecarV1)
	for i, doc := range strings.Split(workloads, "---\n") {
		create(t, ns, []schema.GroupVersionResource{deployments, statefulsets, daemonsets}[i], doc)
	}
	settled(t, ns)
	old := map[string]bool{}
	for _, p := range list(t, ns, pods) {
		old[string(p.GetUID())] = true
	}
	if len(old) != 3+2+len(c.Nodes) {
		t.Fatalf("%d Pods before injection, want %d", len(old), 3+2+len(c.Nodes))
	}

	expectCode(t, kinject(t, "deploy/web", "sts/db", "ds/agent", "-n", ns, "--template", v1), 0)
	var seen []int
	start := time.Now()
	for time.Since(start) < time.Minute {
		rows := statusRows(t, "deploy/web", "-n", ns, "--template", v1)
		if len(rows) != 1 {
			t.Fatalf("status deploy/web: %d rows", len(rows))
		}
		if len(seen) == 0 || seen[len(seen)-1] != rows[0].PodsBehind {
			seen = append(seen, rows[0].PodsBehind)
		}
		if rows[0].PodsBehind == 0 && rows[0].Pods == 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("BEHIND of deployment web, as status showed it: %v", seen)
	if len(seen) < 2 || seen[0] == 0 || seen[len(seen)-1] != 0 {
		t.Errorf("BEHIND went %v; want it to start above 0 and fall to 0", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] > seen[i-1] {
			t.Errorf("BEHIND rose: %v", seen)
		}
	}

	for _, w := range []string{"deploy/web", "sts/db", "ds/agent"} {
		out, err := kubectl(t, "rollout", "status", w, "-n", ns, "--timeout=2m")
		if err != nil {
			t.Fatalf("kubectl rollout status %s: %v\n%s", w, err, out)
		}
		t.Logf("kubectl rollout status %s: %s", w, strings.TrimSpace(out))
	}
	eventually(t, time.Minute, "the old Pods to go", func() bool {
		for _, p := range list(t, ns, pods) {
			if old[string(p.GetUID())] {
				return false
			}
		}
		return true
	})
	count := map[string]int{}
	for _, p := range list(t, ns, pods) {
		count[p.GetLabels()["app"]]++
		if !hasImage(p, "envoyproxy/envoy:v1.33.0") {
			t.Errorf("Pod %s has no sidecar: %v", p.GetName(), images(p))
		}
	}
	if got, want := fmt.Sprint(count), fmt.Sprintf("map[agent:%d db:2 web:3]", len(c.Nodes)); got != want {
		t.Errorf("Pods by workload %s, want %s", got, want)
	}
	if n, which := behind(statusRows(t, "-n", ns, "--template", v1), nil); n != 0 {
		t.Errorf("%d Pods behind after the rollouts: %v", n, which)
	}
}
