package node_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// meshService is a Deployment of three Pods (their app Ready once it
// listens) behind a Service on the proxy's port.
const meshService = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: mesh
spec:
  replicas: 3
  selector:
    matchLabels: {app: mesh}
  template:
    metadata:
      labels: {app: mesh}
    spec:
      containers:
      - name: app
        image: %s
        ports:
        - containerPort: 8080
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: mesh
spec:
  selector: {app: mesh}
  ports:
  - name: proxy
    port: 10000
    targetPort: 10000
`

// meshClient sends as a mesh's client proxy does: a request every 10 ms,
// each on a new connection, round robin over the Pods the Service's
// EndpointSlices call ready, which it reads again every 200 ms. It counts
// the requests sent and those that failed, and keeps the first errors.
type meshClient struct {
	sent, lost atomic.Int64
	mu         sync.Mutex
	errors     []string
	stop       chan struct{}
	done       sync.WaitGroup
}

// startMeshClient starts sending to Service name of ns.
func startMeshClient(t *testing.T, ns, name string) *meshClient {
	m := &meshClient{stop: make(chan struct{})}
	var (
		mu    sync.Mutex
		ready []string
	)
	refresh := func() {
		l, err := admin(t).DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err != nil {
			return
		}
		var ips []string
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ips = append(ips, e.Addresses...)
				}
			}
		}
		mu.Lock()
		ready = ips
		mu.Unlock()
	}
	refresh()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	m.done.Add(2)
	go func() {
		defer m.done.Done()
		for {
			select {
			case <-m.stop:
				return
			case <-time.After(200 * time.Millisecond):
				refresh()
			}
		}
	}()
	go func() {
		defer m.done.Done()
		next := 0
		for {
			select {
			case <-m.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			mu.Lock()
			ips := ready
			mu.Unlock()
			if len(ips) == 0 {
				// no Pod to send to: a request a mesh would fail too
				m.sent.Add(1)
				m.fail("no ready endpoint")
				continue
			}
			ip := ips[next%len(ips)]
			next++
			m.sent.Add(1)
			resp, err := client.Get("http://" + ip + ":10000/")
			if err != nil {
				m.fail(err.Error())
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				m.fail(ip + ": " + resp.Status)
			}
		}
	}()
	return m
}

func (m *meshClient) fail(why string) {
	m.lost.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.errors) < 5 {
		m.errors = append(m.errors, why)
	}
}

// finish stops sending and returns the requests sent and lost.
func (m *meshClient) finish() (sent, lost int64, errors []string) {
	close(m.stop)
	m.done.Wait()
	return m.sent.Load(), m.lost.Load(), m.errors
}

// TestUpgradeLosesNoRequest upgrades the sidecar of a Deployment of three
// Pods behind a Service while a mesh-like client sends to it (see
// meshClient), three ways in one run: in place (restart, the default:
// each Pod drained first), a broken release rolled back in place, and
// then, for comparison, in place without the drain (--drain=false) and
// recreate (--strategy recreate, a rollout). In place and the rollback
// lose no request; the other two figures are logged beside them.
func TestUpgradeLosesNoRequest(t *testing.T) {
	n.Require(t)
	ns := namespace(t, nil)
	enableAdmission(t, ns, "")
	kubectl(t, fmt.Sprintf(meshService, node.AppImage), "apply", "-n", ns, "-f", "-")
	kubectl(t, "", "rollout", "status", "-n", ns, "deploy/mesh", "--timeout=2m")
	settle(t, ns, 3)
	t.Cleanup(func() { inject(t, "policy", "--apply", "--image", node.ProxyImage) })
	before := appContainers(t, ns)

	type row struct {
		name       string
		sent, lost int64
		took       time.Duration
		errors     []string
	}
	var rows []row
	measure := func(name string, wantCode int, args ...string) row {
		t.Helper()
		client := startMeshClient(t, ns, "mesh")
		time.Sleep(time.Second) // traffic before the upgrade starts
		begin := time.Now()
		r := inject(t, append([]string{"restart", "-n", ns}, args...)...)
		took := time.Since(begin)
		if r.code != wantCode {
			t.Errorf("%s: restart exit %d, want %d\n%s", name, r.code, wantCode, r.stderr)
		}
		settle(t, ns, 3)
		time.Sleep(time.Second) // traffic after it
		sent, lost, errs := client.finish()
		if sent < int64(took/(20*time.Millisecond)) {
			t.Errorf("%s: only %d requests sent in %s: the client did not run", name, sent, took)
		}
		rw := row{name, sent, lost, took, errs}
		rows = append(rows, rw)
		return rw
	}

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageNext), "upgrade the policy")
	waitPolicyImage(t, ns, node.ProxyImageNext)
	inPlace := measure("in place", 0)
	if inPlace.lost != 0 {
		t.Errorf("in place: %d of %d requests lost, want 0: %v", inPlace.lost, inPlace.sent, inPlace.errors)
	}
	keptAll(t, before, appContainers(t, ns))
	for _, p := range podsOf(t, ns, "") {
		if c, _ := sidecar(p); c == nil || c.Image != node.ProxyImageNext {
			t.Errorf("Pod %s: sidecar %v, want image %s", p.Name, c, node.ProxyImageNext)
		}
	}

	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageBroken), "install the broken release")
	waitPolicyImage(t, ns, node.ProxyImageBroken)
	rolledBack := measure("rolled back", 1, "--progress-deadline", "20s")
	if rolledBack.lost != 0 {
		t.Errorf("rolled back: %d of %d requests lost, want 0: %v", rolledBack.lost, rolledBack.sent, rolledBack.errors)
	}
	keptAll(t, before, appContainers(t, ns))

	// for comparison, in the same run: in place without the drain (as
	// before it existed, and as with a template that declares none), then
	// recreate; both reported, not asserted
	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImage), "go back to the first release")
	waitPolicyImage(t, ns, node.ProxyImage)
	noDrain := measure("in place, --drain=false", 0, "--drain=false")
	keptAll(t, before, appContainers(t, ns))
	mustSucceed(t, inject(t, "policy", "--apply", "--image", node.ProxyImageNext), "upgrade the policy again")
	waitPolicyImage(t, ns, node.ProxyImageNext)
	measure("recreate", 0, "--strategy", "recreate")
	if noDrain.lost == 0 {
		t.Logf("in place without the drain lost nothing this time: the client read the slices before the proxy stopped")
	}

	var table strings.Builder
	fmt.Fprintf(&table, "| upgrade of 3 Pods | requests sent | lost | restart took | per Pod |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&table, "| %s | %d | %d | %s | %s |\n", r.name, r.sent, r.lost, r.took.Round(100*time.Millisecond), (r.took / 3).Round(100*time.Millisecond))
	}
	t.Logf("a request every 10 ms to the Pods the EndpointSlices call ready:\n%s", table.String())
	for _, r := range rows {
		if len(r.errors) > 0 {
			t.Logf("%s: first errors: %v", r.name, r.errors)
		}
	}
}
