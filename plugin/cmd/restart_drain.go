package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// endpointSliceResource is what an EndpointSlice is read as.
var endpointSliceResource = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// proxyCaller POSTs to a path on a port of a Pod, as the API server's
// port-forward reaches it: loopback listeners included.
type proxyCaller interface {
	Post(ctx context.Context, namespace, pod string, port int, path string) error
}

// drainPoll is how often a drain reads the Pod's EndpointSlices.
const drainPoll = 200 * time.Millisecond

// drained is a Pod taken out of service: restore puts it back, when the
// upgrade stops before the proxy's image changes; listed counts the
// EndpointSlice entries that listed it before.
type drained struct {
	pod    *unstructured.Unstructured
	listed int
}

// drainPod takes the Pod's proxy out of service with the template's drain
// step and waits until no EndpointSlice lists the Pod as ready and the
// Pod's Ready condition is False, then the drain's seconds more, for the
// clients that read the slices late. Without a drain step it returns at
// once. When the wait fails, the drain is undone before it returns.
func (m *restartMover) drainPod(ctx context.Context, pod *unstructured.Unstructured) (*drained, error) {
	d := m.drain
	if d == nil {
		return &drained{pod: pod}, nil
	}
	ns, name := pod.GetNamespace(), pod.GetName()
	slices, err := m.endpointSlices(ctx, ns)
	if err != nil {
		return nil, err
	}
	listed, _ := rollout.InService(slices, ns, name, string(pod.GetUID()))
	if err := m.caller.Post(ctx, ns, name, d.Port, d.Fail); err != nil {
		return nil, rollout.Fail(rollout.ReasonDrain, "draining Pod %s (POST %s on port %d of container %s): %v", name, d.Fail, d.Port, d.Container, err)
	}
	out := &drained{pod: pod, listed: listed}
	start := m.now()
	for {
		cur := m.cache.get("pods", ns, name)
		if cur == nil || cur.GetUID() != pod.GetUID() {
			return nil, rollout.Fail(rollout.ReasonGone, "Pod %s was deleted while it was drained", name)
		}
		slices, err := m.endpointSlices(ctx, ns)
		if err != nil {
			return nil, errors.Join(err, m.restore(ctx, out))
		}
		_, ready := rollout.InService(slices, ns, name, string(pod.GetUID()))
		if ready == 0 && !rollout.PodReady(cur) {
			break
		}
		if m.now().Sub(start) > m.deadline {
			why := fmt.Sprintf("%d EndpointSlice entries still list it as ready", ready)
			if ready == 0 {
				why = "its Ready condition is still True"
			}
			return nil, rollout.Fail(rollout.ReasonDrain, "Pod %s still in service %s after POST %s (%s): does the readinessProbe of container %s read the proxy's readiness?; its drain was undone%s",
				name, m.deadline, d.Fail, why, d.Container, errSuffix(m.restore(ctx, out)))
		}
		if err := m.sleep(ctx, drainPoll); err != nil {
			return nil, errors.Join(rollout.Fail(rollout.ReasonInterrupted, "stopped while Pod %s was drained", name), m.restore(ctx, out))
		}
	}
	if err := m.sleep(ctx, time.Duration(d.Seconds)*time.Second); err != nil {
		return nil, errors.Join(rollout.Fail(rollout.ReasonInterrupted, "stopped while Pod %s was drained", name), m.restore(ctx, out))
	}
	return out, nil
}

// restore undoes a drain whose upgrade stopped before the proxy's image
// changed: the proxy answers Ready again, and the Pod goes back into
// service. It is sent even once the run is being stopped.
func (m *restartMover) restore(ctx context.Context, d *drained) error {
	if m.drain == nil || d == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := m.caller.Post(rctx, d.pod.GetNamespace(), d.pod.GetName(), m.drain.Port, m.drain.Restore); err != nil {
		return fmt.Errorf("undoing the drain of Pod %s (POST %s): %w", d.pod.GetName(), m.drain.Restore, err)
	}
	return nil
}

// waitInService waits until the EndpointSlices list the Pod as ready as
// many times as they did before its drain (its Services send to it
// again), at most the deadline from now.
func (m *restartMover) waitInService(ctx context.Context, d *drained) error {
	if d == nil || d.listed == 0 {
		return nil
	}
	ns, name := d.pod.GetNamespace(), d.pod.GetName()
	start := m.now()
	for {
		slices, err := m.endpointSlices(ctx, ns)
		if err != nil {
			return err
		}
		_, ready := rollout.InService(slices, ns, name, string(d.pod.GetUID()))
		if ready >= d.listed {
			return nil
		}
		if m.now().Sub(start) > m.deadline {
			return fmt.Errorf("Ready on its new sidecar, but its EndpointSlices list it ready %d times of %d after %s", ready, d.listed, m.deadline)
		}
		if err := m.sleep(ctx, drainPoll); err != nil {
			return fmt.Errorf("stopped waiting for its EndpointSlices to list it again")
		}
	}
}

// endpointSlices lists the namespace's EndpointSlices that a drain can
// empty: those of a Service that publishes not-ready addresses
// (spec.publishNotReadyAddresses, common for a StatefulSet's peers) list
// every Pod ready whatever its readiness, and their clients send to Pods
// that are not ready by design, so they are left out.
//
// One LIST serves every Pod of the namespace drained at once for
// drainPoll: the Pods of a batch poll together, and a batch of 25 would
// otherwise LIST 125 times a second.
func (m *restartMover) endpointSlices(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	items, err := m.listSlices(ctx, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, s := range items {
		service := s.GetLabels()[serviceNameLabel]
		if service != "" && m.publishesNotReady(ctx, namespace, service) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// listedSlices is a LIST of a namespace's EndpointSlices and when it was
// made.
type listedSlices struct {
	at    time.Time
	items []*unstructured.Unstructured
}

// listSlices lists the namespace's EndpointSlices, or returns the list
// made less than drainPoll ago.
func (m *restartMover) listSlices(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	m.slicesMu.Lock()
	defer m.slicesMu.Unlock()
	if got, ok := m.slices[namespace]; ok && m.now().Sub(got.at) < drainPoll {
		return got.items, nil
	}
	list, err := m.client.Resource(endpointSliceResource).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, rollout.Fail(rollout.ReasonAPI, "listing the EndpointSlices of namespace %s (a drain needs list on endpointslices): %w", namespace, err)
	}
	items := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		items[i] = &list.Items[i]
	}
	if m.slices == nil {
		m.slices = map[string]listedSlices{}
	}
	m.slices[namespace] = listedSlices{m.now(), items}
	return items, nil
}

// serviceNameLabel names the Service of an EndpointSlice.
const serviceNameLabel = "kubernetes.io/service-name"

var serviceResource = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// publishesNotReady reports whether the Service publishes not-ready
// addresses, read once per Service for the run; a Service that cannot be
// read (gone, or RBAC without get on services) counts as one that does
// not, so its slices are waited on.
func (m *restartMover) publishesNotReady(ctx context.Context, namespace, name string) bool {
	key := namespace + "/" + name
	m.servicesMu.Lock()
	known, ok := m.services[key]
	m.servicesMu.Unlock()
	if ok {
		return known
	}
	publishes := false
	if svc, err := m.client.Resource(serviceResource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
		publishes, _, _ = unstructured.NestedBool(svc.Object, "spec", "publishNotReadyAddresses")
	}
	m.servicesMu.Lock()
	if m.services == nil {
		m.services = map[string]bool{}
	}
	m.services[key] = publishes
	m.servicesMu.Unlock()
	return publishes
}

// tick fires once d has passed on the mover's clock.
func (m *restartMover) tick(d time.Duration) <-chan time.Time {
	if m.after == nil {
		return time.After(d)
	}
	return m.after(d)
}

// sleep waits for d, or until ctx is done.
func (m *restartMover) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-m.tick(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// drainOf is the template's drain step, nil when it declares none or
// --drain=false turns it off.
func drainOf(t *template.Template, on bool) *template.Drain {
	if !on || t == nil {
		return nil
	}
	return t.Drain
}

// portForwardCaller is the proxyCaller of a live cluster: the API server's
// port-forward of the Pod (WebSockets, falling back to SPDY on servers
// older than 1.30, as kubectl does), then one HTTP POST through it.
type portForwardCaller struct {
	config *rest.Config
}

// Post sends POST path to port of the Pod and wants a 2xx answer.
func (c portForwardCaller) Post(ctx context.Context, namespace, pod string, port int, path string) error {
	u, err := url.Parse(strings.TrimSuffix(c.config.Host, "/") + c.config.APIPath)
	if err != nil {
		return err
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/portforward", namespace, pod)
	transport, upgrader, err := spdy.RoundTripperFor(c.config)
	if err != nil {
		return err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	if ws, err := portforward.NewSPDYOverWebsocketDialer(u, c.config); err == nil {
		dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	fctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ready := make(chan struct{})
	var errOut strings.Builder
	fw, err := portforward.NewOnAddressesWithContext(fctx, dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, ready, io.Discard, &errOut)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-done:
		return fmt.Errorf("port-forward: %w", err)
	case <-fctx.Done():
		return fmt.Errorf("port-forward: %w", fctx.Err())
	}
	defer func() { cancel(); <-done }()
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		return fmt.Errorf("port-forward: no local port: %v", err)
	}
	req, err := http.NewRequestWithContext(fctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", ports[0].Local, path), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			return fmt.Errorf("%w (%s)", err, msg)
		}
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// noDrainWarning is what restart says when it upgrades Pods in place
// without taking their proxies out of service first; "" when it drains
// them, or upgrades none in place.
func noDrainWarning(steps []rollout.Step, t *template.Template, on bool) string {
	inPlace := false
	for _, s := range steps {
		inPlace = inPlace || s.Action == rollout.InPlace
	}
	switch {
	case !inPlace:
		return ""
	case !on:
		return "warning: --drain=false: each Pod upgraded in place stays in its Services' endpoints while its proxy restarts; requests sent to it meanwhile fail"
	case t == nil || t.Drain == nil:
		return "warning: the template declares no drain step (drain: in the template, see docs/restart.md): each Pod upgraded in place stays in its Services' endpoints while its proxy restarts; requests sent to it meanwhile fail"
	}
	return ""
}

// nodeVersions reads each Node's kubelet version once, when first asked
// (nil when the Nodes cannot be listed: RBAC often allows no cluster-scoped
// reads, and then every kubelet is taken to be recent).
func nodeVersions(ctx context.Context, client dynamic.Interface) func(node string) string {
	var (
		once     sync.Once
		versions map[string]string
	)
	return func(node string) string {
		once.Do(func() {
			list, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"}).List(ctx, metav1.ListOptions{})
			if err != nil {
				return
			}
			versions = map[string]string{}
			for _, n := range list.Items {
				versions[n.GetName()], _, _ = unstructured.NestedString(n.Object, "status", "nodeInfo", "kubeletVersion")
			}
		})
		return versions[node]
	}
}
