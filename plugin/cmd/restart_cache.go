package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// restartCache holds what restart reads, the kinds status lists, kept
// current by one list and one watch per kind (informers): the plan is
// built from it and every rollout is waited on through it, so the
// requests do not grow with the time rollouts take.
type restartCache struct {
	factory   dynamicinformer.DynamicSharedInformerFactory
	informers map[string]cache.SharedIndexInformer // by resource
	kinds     map[string]schema.GroupVersionKind   // by resource

	mu       sync.Mutex
	changed  chan struct{}
	watchErr error
	// stopSync ends start's wait for the lists once one is forbidden.
	stopSync context.CancelFunc
}

// controllerIndex indexes Pods and ReplicaSets by the UID of their
// controller.
const controllerIndex = "controller"

func newRestartCache(client dynamic.Interface, namespace string) *restartCache {
	c := &restartCache{
		factory:   dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, namespace, nil),
		informers: map[string]cache.SharedIndexInformer{},
		kinds:     map[string]schema.GroupVersionKind{},
		changed:   make(chan struct{}),
	}
	for _, r := range statusResources {
		inf := c.factory.ForResource(r.gvr).Informer()
		c.informers[r.gvr.Resource] = inf
		c.kinds[r.gvr.Resource] = r.gvr.GroupVersion().WithKind(kindOf(r.gvr.Resource))
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.notify() },
			UpdateFunc: func(any, any) { c.notify() },
			DeleteFunc: func(any) { c.notify() },
		})
		gr := r.gvr.GroupResource()
		_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
			if apierrors.IsForbidden(err) {
				c.mu.Lock()
				c.watchErr = fmt.Errorf("listing %s: %w: kubectl inject restart needs get, list and watch on %s (RBAC, see docs/restart.md): %w", gr, errForbidden, gr, err)
				stop := c.stopSync
				c.mu.Unlock()
				if stop != nil {
					stop()
				}
			}
		})
		if r.gvr.Resource == "pods" || r.gvr.Resource == "replicasets" {
			_ = inf.AddIndexers(cache.Indexers{controllerIndex: func(obj any) ([]string, error) {
				u, ok := obj.(*unstructured.Unstructured)
				if !ok {
					return nil, nil
				}
				for _, ref := range u.GetOwnerReferences() {
					if ref.Controller != nil && *ref.Controller {
						return []string{string(ref.UID)}, nil
					}
				}
				return nil, nil
			}})
		}
	}
	return c
}

// start lists and watches every kind until ctx is done, and returns
// once all are listed (or a list is forbidden).
func (c *restartCache) start(ctx context.Context) error {
	syncCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	c.stopSync = cancel
	c.mu.Unlock()
	c.factory.Start(ctx.Done())
	for res, inf := range c.informers {
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			if err := c.err(); err != nil {
				return err
			}
			return fmt.Errorf("listing %s: %w", res, errors.Join(ctx.Err(), errors.New("not listed")))
		}
	}
	return nil
}

func (c *restartCache) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watchErr
}

// notify wakes every waiter: something changed.
func (c *restartCache) notify() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// next is closed at the next change.
func (c *restartCache) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// typed gives obj (a cache item, never to be changed) its kind.
func (c *restartCache) typed(resource string, obj any) *unstructured.Unstructured {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	u = u.DeepCopy()
	u.SetGroupVersionKind(c.kinds[resource])
	return u
}

// objects returns a copy of everything listed, every kind.
func (c *restartCache) objects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, r := range statusResources {
		for _, item := range c.informers[r.gvr.Resource].GetStore().List() {
			if u := c.typed(r.gvr.Resource, item); u != nil {
				out = append(out, u)
			}
		}
	}
	return out
}

// get returns a copy of one object, nil when it does not exist.
func (c *restartCache) get(resource, namespace, name string) *unstructured.Unstructured {
	inf, ok := c.informers[resource]
	if !ok {
		return nil
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil
	}
	return c.typed(resource, item)
}

// podsOf returns copies of the Pods owner controls.
func (c *restartCache) podsOf(owner *unstructured.Unstructured) []*unstructured.Unstructured {
	return c.controlled("pods", owner)
}

// controlled returns copies of the objects of resource that owner
// controls.
func (c *restartCache) controlled(resource string, owner *unstructured.Unstructured) []*unstructured.Unstructured {
	items, err := c.informers[resource].GetIndexer().ByIndex(controllerIndex, string(owner.GetUID()))
	if err != nil {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, item := range items {
		if u := c.typed(resource, item); u != nil {
			out = append(out, u)
		}
	}
	return out
}

// owned returns what a workload's controllers made: its Pods, or a
// Deployment's ReplicaSets and theirs, terminating Pods included (the
// cache holds a Pod until it is gone). A Pod without a controller is its
// own workload: it owns itself.
func (c *restartCache) owned(obj *unstructured.Unstructured) rollout.Owned {
	if obj.GetKind() == "Pod" {
		return rollout.Owned{Pods: []*unstructured.Unstructured{obj}}
	}
	if obj.GetKind() != "Deployment" {
		return rollout.Owned{Pods: c.podsOf(obj)}
	}
	var o rollout.Owned
	o.ReplicaSets = c.controlled("replicasets", obj)
	for _, rs := range o.ReplicaSets {
		o.Pods = append(o.Pods, c.podsOf(rs)...)
	}
	return o
}
