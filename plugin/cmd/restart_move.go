package cmd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// restartedAtAnnotation is what kubectl rollout restart sets on a pod
// template; its new value makes the controller roll the Pods.
const restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// restartMover moves one workload to current on the cluster (see
// rollout.Mover) and waits on it through the cache.
type restartMover struct {
	cache    *restartCache
	client   dynamic.Interface
	patcher  *live.Patcher
	injector *inject.Injector
	// deadline bounds a wait without progress (a Deployment's own
	// progressDeadlineSeconds usually ends it first).
	deadline time.Duration
	now      func() time.Time
	// after waits as time.After does (nil: time.After); tests pass a
	// clock of their own.
	after func(time.Duration) <-chan time.Time
	// drain is the template's drain step, nil when there is none or
	// --drain=false; caller reaches the Pods' proxies for it.
	drain  *template.Drain
	caller proxyCaller
	// slots holds a token per Pod being upgraded in place across the
	// fleet: at most --max-in-flight at once (nil: no bound).
	slots chan struct{}
	// decisions remembers the verdicts on Pods across the plan and the
	// batches.
	decisions *rollout.Decisions
	// services remembers which Services publish not-ready addresses
	// (their EndpointSlices are not waited on by a drain).
	servicesMu sync.Mutex
	services   map[string]bool
	// slices is the last LIST of each namespace's EndpointSlices, shared
	// by the Pods drained at once.
	slicesMu sync.Mutex
	slices   map[string]listedSlices
}

// Move does s's action and waits until the workload is current.
func (m *restartMover) Move(ctx context.Context, s rollout.Step) error {
	resource := resourceOf(s.Kind)
	switch s.Action {
	case rollout.Wait:
		return m.waitRollout(ctx, resource, s, 0)
	case rollout.Restart:
		gen, err := m.restart(ctx, resource, s)
		if err != nil {
			return err
		}
		return m.waitRollout(ctx, resource, s, gen)
	case rollout.Reinject:
		out, err := m.reinject(ctx, resource, s, false)
		if err != nil || !fleet.Rolls(s.Kind) {
			return err
		}
		return m.waitRollout(ctx, resource, s, generation(out))
	case rollout.DeletePods:
		var out *unstructured.Unstructured
		if s.Inject {
			var err error
			if out, err = m.reinject(ctx, resource, s, false); err != nil {
				return err
			}
		}
		return m.deletePods(ctx, resource, s, generation(out))
	case rollout.InPlace:
		var out *unstructured.Unstructured
		if s.Inject {
			var err error
			if out, err = m.reinject(ctx, resource, s, false); err != nil {
				return err
			}
		}
		return m.upgradeInPlace(ctx, resource, s, generation(out))
	case rollout.Recreate:
		out, err := m.reinject(ctx, resource, s, true)
		if err != nil || out == nil {
			return err
		}
		return m.waitRecreated(ctx, s, out.GetUID())
	}
	return fmt.Errorf("nothing to do for %s", s.Action)
}

// restart sets the restartedAt annotation, as kubectl rollout restart
// does, and returns the generation that holds it.
func (m *restartMover) restart(ctx context.Context, resource string, s rollout.Step) (int64, error) {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, restartedAtAnnotation, m.now().Format(time.RFC3339))
	out, err := m.client.Resource(gvrOf(resource)).Namespace(s.Namespace).Patch(ctx, s.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: m.patcher.FieldManager})
	if err != nil {
		return 0, rollout.Fail(rollout.ReasonAPI, "restarting: %w", err)
	}
	return out.GetGeneration(), nil
}

// reinject injects the current template and returns the object that
// holds it, nil when nothing changed (a bare Pod with recreate: deleted,
// gone, and created again).
func (m *restartMover) reinject(ctx context.Context, resource string, s rollout.Step, recreate bool) (*unstructured.Unstructured, error) {
	p := *m.patcher
	p.Recreate = recreate
	gvr := gvrOf(resource)
	mapping := &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvr.GroupVersion().WithKind(s.Kind), Scope: meta.RESTScopeNamespace}
	res := p.Process(ctx, live.Target{Mapping: mapping, Namespace: s.Namespace, Name: s.Name, Object: m.cache.get(resource, s.Namespace, s.Name)})
	if res.Failed() {
		return nil, rollout.Fail(rollout.ReasonInjection, "injecting the current template: %s", res.Message)
	}
	return res.Object, nil
}

// generation is obj's generation, 0 for nil.
func generation(obj *unstructured.Unstructured) int64 {
	if obj == nil {
		return 0
	}
	return obj.GetGeneration()
}

// waitRecreated waits until the bare Pod s names, created again with
// uid, is Ready: the Pod it replaces is gone by then (recreating waits
// for it), and until the new one is Ready the Pod is not done.
func (m *restartMover) waitRecreated(ctx context.Context, s rollout.Step, uid types.UID) error {
	last, lastMessage := m.now(), ""
	for {
		changed := m.cache.next()
		// The cache may still hold the Pod deleted, or not yet the new
		// one: only the new one's UID counts.
		pod := m.cache.get("pods", s.Namespace, s.Name)
		if pod != nil && pod.GetUID() == uid && rollout.PodReady(pod) {
			return nil
		}
		message := "waiting for the Pod created again to be Ready"
		if message != lastMessage {
			last, lastMessage = m.now(), message
		}
		if err := m.pause(ctx, changed, last, lastMessage); err != nil {
			return err
		}
	}
}

// waitRollout waits until the workload's rollout of generation gen (or
// later) completes, no Pod of an older template left, terminating ones
// included (rollout.Complete); or until it fails, or makes no progress
// for the deadline.
func (m *restartMover) waitRollout(ctx context.Context, resource string, s rollout.Step, gen int64) error {
	last, lastMessage := m.now(), ""
	for {
		changed := m.cache.next()
		obj := m.cache.get(resource, s.Namespace, s.Name)
		if obj == nil {
			return rollout.Fail(rollout.ReasonGone, "the %s was deleted", s.Kind)
		}
		if obj.GetGeneration() >= gen {
			p := rollout.Complete(obj, m.cache.owned(obj))
			if p.Done {
				return nil
			}
			if p.Failed != "" {
				return rollout.Fail(p.Failed, "%s", p.Message)
			}
			if p.Message != lastMessage {
				last, lastMessage = m.now(), p.Message
			}
		}
		if err := m.pause(ctx, changed, last, lastMessage); err != nil {
			return err
		}
	}
}

// pause waits for a change, at most a second; it fails once there was
// no progress since last for the deadline, or ctx is done.
func (m *restartMover) pause(ctx context.Context, changed <-chan struct{}, last time.Time, message string) error {
	if m.now().Sub(last) > m.deadline {
		return rollout.Fail(rollout.ReasonProgressDeadline, "no progress for %s (%s)", m.deadline, message)
	}
	select {
	case <-changed:
	case <-time.After(time.Second):
	case <-ctx.Done():
		return rollout.Fail(rollout.ReasonInterrupted, "stopped waiting (%s)", message)
	}
	return nil
}

// deletePods deletes, one at a time, the workload's Pods that are behind,
// each once the workload is settled (all its Pods Ready), waiting for
// the deleted Pod to go and its replacement to be Ready. One already
// terminating (deleted by a run that was stopped, or by someone else) is
// waited on the same way, not deleted again. A replacement that is still
// behind fails the step rather than looping: nothing would change it. The
// workload is judged at generation gen or later (the one injection wrote).
func (m *restartMover) deletePods(ctx context.Context, resource string, s rollout.Step, gen int64) error {
	deleted := map[string]bool{}
	waited := false // for a Pod deleted before
	before := ""    // the workload's resourceVersion before the last deletion
	for {
		obj, err := m.settle(ctx, resource, s, gen, "")
		if err != nil {
			return err
		}
		pods := m.cache.podsOf(obj)
		var behind []*unstructured.Unstructured
		var going types.UID
		for _, p := range pods {
			switch {
			case !fleet.PodBehind(m.injector, obj, p):
			case p.GetDeletionTimestamp() != nil:
				going = p.GetUID()
			default:
				behind = append(behind, p)
			}
		}
		if going != "" {
			if _, err := m.settle(ctx, resource, s, gen, going); err != nil {
				return err
			}
			waited = true
			continue
		}
		if len(behind) == 0 {
			if len(deleted) > 0 || waited {
				return m.counted(ctx, resource, s, before)
			}
			return nil
		}
		// Highest ordinal first, as a StatefulSet rolls.
		pod := slices.MaxFunc(behind, byOrdinal)
		if deleted[pod.GetName()] || len(deleted) > len(pods) {
			return rollout.Fail(rollout.ReasonInjection, "the replacement of Pod %s still runs an outdated sidecar (is injection at admission enabled in namespace %s?)", pod.GetName(), s.Namespace)
		}
		uid := pod.GetUID()
		before = obj.GetResourceVersion()
		err = m.client.Resource(gvrOf("pods")).Namespace(s.Namespace).Delete(ctx, pod.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil {
			return rollout.Fail(rollout.ReasonAPI, "deleting Pod %s: %w", pod.GetName(), err)
		}
		deleted[pod.GetName()] = true
		if _, err := m.settle(ctx, resource, s, gen, uid); err != nil {
			return err
		}
	}
}

// counted waits until the workload's own status has caught up with the
// last replacement: until the controller has seen it, its readiness may
// still count the Pod deleted, and the workload is not done for anyone
// watching it. An OnDelete StatefulSet or DaemonSet is counted when its
// status counts every Pod as running its updated revision and Ready. A
// ReplicaSet or ReplicationController counts no revision: its status has
// caught up once it changed after the last deletion (before is the
// resourceVersion read before it) and counts every Pod Ready; a
// controller with nothing to report leaves it unchanged, which
// statusQuiet of quiet accepts.
func (m *restartMover) counted(ctx context.Context, resource string, s rollout.Step, before string) error {
	field := map[string]string{"StatefulSet": "updatedReplicas", "DaemonSet": "updatedNumberScheduled"}[s.Kind]
	start := m.now()
	for {
		changed := m.cache.next()
		obj := m.cache.get(resource, s.Namespace, s.Name)
		if obj == nil {
			return rollout.Fail(rollout.ReasonGone, "the %s was deleted", s.Kind)
		}
		var message string
		if field == "" {
			if statusReady(obj) && (obj.GetResourceVersion() != before || m.now().Sub(start) > statusQuiet) {
				return nil
			}
			message = fmt.Sprintf("waiting for the %s's status to count the replacement", s.Kind)
		} else {
			updated, _, _ := unstructured.NestedInt64(obj.Object, "status", field)
			if updated >= rollout.DesiredPods(obj) && statusReady(obj) {
				return nil
			}
			message = fmt.Sprintf("%d of %d Pods counted as updated by the %s", updated, rollout.DesiredPods(obj), s.Kind)
		}
		if err := m.pause(ctx, changed, start, message); err != nil {
			return err
		}
	}
}

// statusQuiet is how long counted waits for a ReplicaSet's status to
// change after its last Pod was replaced before taking it as it is.
const statusQuiet = 5 * time.Second

// statusReady reports a workload whose status counts all its Pods Ready.
func statusReady(obj *unstructured.Unstructured) bool {
	if obj.GetKind() == "ReplicaSet" || obj.GetKind() == "ReplicationController" {
		ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
		return ready >= rollout.DesiredPods(obj)
	}
	return rollout.Status(obj).Done
}

// settle waits until the cache holds the workload at generation gen or
// later, the Pod gone (its UID, when set) has left it, and the workload
// has every Pod it wants Ready; it returns the workload.
func (m *restartMover) settle(ctx context.Context, resource string, s rollout.Step, gen int64, gone types.UID) (*unstructured.Unstructured, error) {
	last, lastMessage := m.now(), ""
	for {
		changed := m.cache.next()
		obj := m.cache.get(resource, s.Namespace, s.Name)
		if obj == nil {
			return nil, rollout.Fail(rollout.ReasonGone, "the %s was deleted", s.Kind)
		}
		ready, present := 0, false
		for _, p := range m.cache.owned(obj).Pods {
			if p.GetUID() == gone {
				present = true
			}
			if rollout.PodReady(p) {
				ready++
			}
		}
		want := rollout.DesiredPods(obj)
		// the workload's own status too: it is what kubectl, and anyone
		// watching, sees of it.
		if !present && int64(ready) >= want && obj.GetGeneration() >= gen && statusReady(obj) {
			return obj, nil
		}
		message := fmt.Sprintf("%d of %d Pods are ready", ready, want)
		switch {
		case obj.GetGeneration() < gen:
			message = "waiting for the injected template"
		case present:
			message = "waiting for the deleted Pod to go"
		}
		if message != lastMessage {
			last, lastMessage = m.now(), message
		}
		if err := m.pause(ctx, changed, last, lastMessage); err != nil {
			return nil, err
		}
	}
}

// byOrdinal orders Pods as a StatefulSet rolls them, by the ordinal
// that ends their names (db-9 before db-10); names without one (a
// ReplicaSet's) by name.
func byOrdinal(a, b *unstructured.Unstructured) int {
	i, errA := strconv.Atoi(a.GetName()[strings.LastIndex(a.GetName(), "-")+1:])
	j, errB := strconv.Atoi(b.GetName()[strings.LastIndex(b.GetName(), "-")+1:])
	if errA == nil && errB == nil && i != j {
		return cmp.Compare(i, j)
	}
	return strings.Compare(a.GetName(), b.GetName())
}
