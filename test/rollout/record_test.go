package rollout

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// inFlight records, from the cluster's side, which workloads are rolling:
// a Deployment, StatefulSet or DaemonSet whose rollout is not complete
// (rollout.Status), a ReplicaSet without a Deployment with fewer Pods
// Ready than it wants. Transitions are ordered by resourceVersion, which
// orders every write across kinds, so the overlap is exact whatever order
// the watches deliver in.
type inFlight struct {
	mu     sync.Mutex
	events []flightEvent
	cancel context.CancelFunc
	done   sync.WaitGroup
}

type flightEvent struct {
	rv      int64
	key     string
	rolling bool
}

// recordInFlight starts watching the workloads of namespaces.
func recordInFlight(t *testing.T, namespaces ...string) *inFlight {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &inFlight{cancel: cancel}
	watched := map[string]bool{}
	for _, ns := range namespaces {
		watched[ns] = true
	}
	for _, gvr := range []schema.GroupVersionResource{deployments, statefulsets, daemonsets, replicasets} {
		l, err := client(t).Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := client(t).Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		kind := kindOf(gvr)
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					obj, isObj := ev.Object.(*unstructured.Unstructured)
					if !isObj || !watched[obj.GetNamespace()] || (kind == "ReplicaSet" && len(obj.GetOwnerReferences()) > 0) {
						continue
					}
					obj.SetKind(kind)
					rv, _ := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
					r.mu.Lock()
					r.events = append(r.events, flightEvent{rv: rv, key: obj.GetNamespace() + "/" + kind + "/" + obj.GetName(), rolling: ev.Type != watch.Deleted && rolling(obj)})
					r.mu.Unlock()
				}
			}
		}()
	}
	return r
}

func rolling(obj *unstructured.Unstructured) bool {
	if obj.GetKind() == "ReplicaSet" {
		want, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
		return ready < want
	}
	return !rollout.Status(obj).Done
}

// stop ends the recording and returns the most workloads rolling at
// once, and the moments that peak was reached, for the log.
func (r *inFlight) stop() (peak int, timeline string) {
	r.cancel()
	r.done.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.SliceStable(r.events, func(i, j int) bool { return r.events[i].rv < r.events[j].rv })
	now := map[string]bool{}
	for _, e := range r.events {
		if e.rolling {
			now[e.key] = true
		} else {
			delete(now, e.key)
		}
		if len(now) > peak {
			peak = len(now)
			var keys []string
			for k := range now {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			timeline = fmt.Sprintf("at resourceVersion %d: %v", e.rv, keys)
		}
	}
	return peak, timeline
}
