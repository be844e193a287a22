package node_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// fleet is what the in-place tests run: in an admission-enabled
// namespace, a Deployment web of two Pods under a PodDisruptionBudget of
// maxUnavailable 1 and a StatefulSet db of two Pods with updateStrategy
// OnDelete; in another namespace, a Deployment api injected in its
// template (by PATCH).
const fleet = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: %[1]s
        ports:
        - containerPort: 8080
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: web}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  podManagementPolicy: Parallel
  updateStrategy: {type: OnDelete}
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: app
        image: %[1]s
        ports:
        - containerPort: 8080
`

const templateInjected = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: app
        image: %s
        ports:
        - containerPort: 8080
`

// appContainer is what an upgrade in place must keep of a Pod: its UID
// and its app container's ID and restart count.
type appContainer struct {
	uid, id  string
	restarts int32
}

// TestUpgradeFleetInPlace upgrades the sidecar of a fleet on the real
// node (see fleet), the proxy image going from ProxyImage to
// ProxyImageNext: kubectl inject restart -A --max-in-flight 2 upgrades
// every Pod injected at admission in place (each keeps its UID, its app
// container its ID and a restart count of 0, its sidecar runs the new
// image), never more than 2 Pods not Ready at once and never 2 of web's
// (its budget); the template-injected api is recreated and said so; then
// status -A --check passes. A broken release (ProxyImageBroken, which
// exits at start) is rolled back on the first Pod, which goes back to
// ProxyImageNext and Ready, nothing else changing, and restart exits 1
// naming the Pod, the container and the kubelet's reason. Last, the same
// fleet is recreated (--strategy recreate) back to ProxyImage, and the
// two ways are logged side by side: wall time, Pods created again, app
// containers restarted.
func TestUpgradeFleetInPlace(t *testing.T) {
	n.Require(t)
	noTestNamespaces(t)
	adm, tpl := namespace(t, nil), namespace(t, nil)
	enableAdmission(t, adm, "")
	kubectl(t, fmt.Sprintf(fleet, node.AppImage), "apply", "-n", adm, "-f", "-")
	mustSucceed(t, wayNamed(t, "live").deploy(t, tpl, fmt.Sprintf(templateInjected, node.AppImage)), "inject api")
	// (kubectl rollout status does not follow an OnDelete StatefulSet)
	settle(t, adm, 4)
	kubectl(t, "", "rollout", "status", "-n", tpl, "deploy/api", "--timeout=2m")
	before := appContainers(t, adm)

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageNext), "upgrade the policy")
	t.Cleanup(func() { inject(t, "policy", "--apply", "--image", node.ProxyImage) })
	waitPolicyImage(t, adm, node.ProxyImageNext)

	plan := inject(t, "restart", "-A", "--dry-run")
	mustSucceed(t, plan, "plan")
	for ref, want := range map[string][]string{
		"deployment.apps/web": {"in-place", "injected at admission; the 2 Pods behind"},
		"statefulset.apps/db": {"in-place", "updateStrategy OnDelete; the 2 Pods behind"},
		"deployment.apps/api": {"recreate", "the template carries the sidecar"},
	} {
		if line := lineOf(plan.stdout, ref); !strings.Contains(line, want[0]) || !strings.Contains(line, want[1]) {
			t.Errorf("the plan's row of %s is %q, want %s: %s", ref, line, want[0], want[1])
		}
	}

	sample := sampleNotReady(t, adm)
	begin := time.Now()
	r := inject(t, "restart", "-A", "--max-in-flight", "2")
	inPlaceTook := time.Since(begin)
	most := sample()
	mustSucceed(t, r, "restart in place")
	if most.all > 2 || most.web > 1 {
		t.Errorf("at most %d Pods not Ready at once (%d of web's), want at most 2 (1 of web's)", most.all, most.web)
	}
	if most.all == 0 {
		t.Errorf("no Pod was ever seen not Ready: the sampling saw no upgrade")
	}
	after := appContainers(t, adm)
	keptAll(t, before, after)
	for _, p := range podsOf(t, adm, "") {
		if c, _ := sidecar(p); c == nil || c.Image != node.ProxyImageNext {
			t.Errorf("Pod %s: sidecar %v, want image %s", p.Name, c, node.ProxyImageNext)
		}
		if s := containerStatus(t, p, "envoy"); s.State.Running == nil || !strings.HasSuffix(s.Image, node.ProxyImageNext) {
			t.Errorf("Pod %s: the sidecar's status: %+v", p.Name, s)
		}
	}
	api := readyPod(t, tpl, "app=api")
	if c, _ := sidecar(api); c.Image != node.ProxyImageNext {
		t.Errorf("api's Pod runs %s, want %s", c.Image, node.ProxyImageNext)
	}
	if r := inject(t, "status", "-A", "--check"); r.code != 0 {
		t.Errorf("status -A --check after restart: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	t.Run("a broken release is rolled back", func(t *testing.T) {
		sidecarRestarts := map[string]int32{}
		for _, p := range podsOf(t, adm, "") {
			sidecarRestarts[p.Name] = containerStatus(t, p, "envoy").RestartCount
		}
		mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageBroken), "install the broken release")
		waitPolicyImage(t, adm, node.ProxyImageBroken)
		r := inject(t, "restart", "-n", adm, "--max-in-flight", "1", "--progress-deadline", "20s")
		if r.code != 1 {
			t.Errorf("restart with a broken image: exit %d, want 1", r.code)
		}
		reasonNamed := strings.Contains(r.stderr, "CrashLoopBackOff") || strings.Contains(r.stderr, "last terminated: Error")
		if !strings.Contains(r.stderr, "rolled back to envoy="+node.ProxyImageNext) || !strings.Contains(r.stderr, "container envoy ("+node.ProxyImageBroken+")") || !reasonNamed {
			t.Errorf("restart does not name the Pod rolled back, its container and the kubelet's reason:\n%s", r.stderr)
		}
		// Back to the working release, every Pod Ready again on it with
		// the same UID and app container.
		var pods []corev1.Pod
		eventually(t, time.Minute, "every Pod of "+adm+" Ready on "+node.ProxyImageNext, func() bool {
			pods = podsOf(t, adm, "")
			for _, p := range pods {
				if c, _ := sidecar(p); c == nil || c.Image != node.ProxyImageNext || !isReady(p) {
					return false
				}
			}
			return len(pods) == 4
		})
		keptAll(t, before, appContainers(t, adm))
		touched := 0
		for _, p := range pods {
			if s := containerStatus(t, p, "envoy"); s.RestartCount > sidecarRestarts[p.Name] {
				touched++
			}
		}
		if touched != 1 {
			t.Errorf("%d Pods' sidecars restarted by the broken release, want 1 (the first, rolled back)", touched)
		}
	})

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImage), "go back to the first release")
	waitPolicyImage(t, adm, node.ProxyImage)
	begin = time.Now()
	r = inject(t, "restart", "-A", "--max-in-flight", "2", "--strategy", "recreate")
	recreateTook := time.Since(begin)
	mustSucceed(t, r, "restart by recreating")
	settle(t, adm, 4)
	recreated := appContainers(t, adm)
	if r := inject(t, "status", "-A", "--check"); r.code != 0 {
		t.Errorf("status -A --check after recreating: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	created, restarted := 0, 0
	for uid := range recreated {
		if _, ok := after[uid]; !ok {
			created++
		}
	}
	for uid, a := range after {
		if b, ok := before[uid]; ok && (b.id != a.id || a.restarts > b.restarts) {
			restarted++
		}
	}
	if created != 4 {
		t.Errorf("--strategy recreate created %d of the 4 Pods again", created)
	}
	inPlaceCreated := 0 // of before, gone after the upgrade in place (keptAll wants 0)
	for uid := range before {
		if _, ok := after[uid]; !ok {
			inPlaceCreated++
		}
	}
	t.Logf("the same fleet, 4 Pods injected at admission (+ api recreated both times):\n"+
		"  in place (--max-in-flight 2): %s, %d of 4 Pods created again, %d app containers restarted\n"+
		"  recreate (--max-in-flight 2): %s, %d of 4 Pods created again, 4 app containers started anew",
		inPlaceTook.Round(100*time.Millisecond), inPlaceCreated, restarted, recreateTook.Round(100*time.Millisecond), created)
}

// lineOf is the first line of text that holds s.
func lineOf(text, s string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

// wayNamed is the way of injecting called name.
func wayNamed(t *testing.T, name string) way {
	t.Helper()
	for _, w := range ways {
		if w.name == name {
			return w
		}
	}
	t.Fatalf("no way %q", name)
	return way{}
}

// settle waits until ns has want Pods, all Ready, none terminating.
func settle(t *testing.T, ns string, want int) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%d Ready Pods in %s", want, ns), func() bool {
		l, err := admin(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(l.Items) != want {
			return false
		}
		for _, p := range l.Items {
			if p.DeletionTimestamp != nil || !isReady(p) {
				return false
			}
		}
		return true
	})
}

// appContainers maps each live Pod of ns by UID to its app container.
func appContainers(t *testing.T, ns string) map[string]appContainer {
	t.Helper()
	out := map[string]appContainer{}
	for _, p := range podsOf(t, ns, "") {
		s := containerStatus(t, p, "app")
		out[string(p.UID)] = appContainer{uid: string(p.UID), id: s.ContainerID, restarts: s.RestartCount}
	}
	return out
}

// keptAll checks that every Pod of before is still there, its app
// container the same and not restarted.
func keptAll(t *testing.T, before, after map[string]appContainer) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%d Pods, were %d", len(after), len(before))
	}
	for uid, b := range before {
		a, ok := after[uid]
		switch {
		case !ok:
			t.Errorf("Pod %s was created again", uid)
		case a.id != b.id || a.restarts != 0:
			t.Errorf("Pod %s: the app container is %s with %d restarts; was %s", uid, a.id, a.restarts, b.id)
		}
	}
}

// notReady is the most Pods seen not Ready at once.
type notReady struct{ all, web int }

// sampleNotReady lists ns's Pods every 100 ms until the returned func is
// called, which returns the most seen not Ready at once (terminating
// Pods left out).
func sampleNotReady(t *testing.T, ns string) func() notReady {
	var (
		mu   sync.Mutex
		most notReady
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			l, err := admin(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
			if err == nil {
				var now notReady
				for _, p := range l.Items {
					if p.DeletionTimestamp == nil && !isReady(p) {
						now.all++
						if p.Labels["app"] == "web" {
							now.web++
						}
					}
				}
				mu.Lock()
				most.all, most.web = max(most.all, now.all), max(most.web, now.web)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() notReady {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}

// containerStatus is the status of the Pod's container name (an init
// container's too).
func containerStatus(t *testing.T, p corev1.Pod, name string) corev1.ContainerStatus {
	t.Helper()
	for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("Pod %s has no status of container %s", p.Name, name)
	return corev1.ContainerStatus{}
}
