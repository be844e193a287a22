package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kinject/kubectl-inject/pkg/reason"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestWaitRollout looks once at a Deployment's rollout (its context
// cancelled): done at the generation waited for or a later one; not
// judged at an earlier one; failed as its status says; under way while
// its status says so or an old Pod is left; gone when deleted.
func TestWaitRollout(t *testing.T) {
	t.Parallel()
	replicaSet := func(name, revision string) *unstructured.Unstructured {
		return decode(t, `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: `+name+`, namespace: ns, uid: rs-`+name+`, annotations: {deployment.kubernetes.io/revision: "`+revision+`"},
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: dep-web, controller: true}]}
`)
	}
	terminating := podOf(t, nil, "web-1-a", "uid-web-1-a", "ReplicaSet/rs-web-1", "", true)
	gone := metav1.NewTime(time.Unix(1_000_000, 0))
	terminating.SetDeletionTimestamp(&gone)
	paused := deployment(t, 2, 2, 3)
	_ = unstructured.SetNestedField(paused.Object, true, "spec", "paused")
	for _, tc := range []struct {
		name   string
		objs   []runtime.Object
		gen    int64
		reason reason.Code // "" for done
		want   string
	}{
		{"done", []runtime.Object{deployment(t, 2, 2, 3)}, 2, "", ""},
		{"done at a later generation", []runtime.Object{deployment(t, 3, 3, 3)}, 2, "", ""},
		{"an earlier generation, done", []runtime.Object{deployment(t, 1, 1, 3)}, 2, rollout.ReasonInterrupted, "stopped waiting ()"},
		{"under way", []runtime.Object{deployment(t, 2, 2, 1)}, 2, rollout.ReasonInterrupted, "stopped waiting (1 of 3 new Pods have been updated)"},
		{"paused", []runtime.Object{paused}, 2, rollout.ReasonPaused, "the Deployment is paused (kubectl rollout resume)"},
		{"an old Pod terminating", []runtime.Object{deployment(t, 2, 2, 3), replicaSet("web-1", "1"), replicaSet("web-2", "2"), terminating}, 2,
			rollout.ReasonInterrupted, "stopped waiting (1 old Pod is terminating: web-1-a)"},
		{"deleted", nil, 2, rollout.ReasonGone, "the Deployment was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _, _ := fakeMover(t, tc.objs...)
			err := m.waitRollout(cancelled(), "deployments", rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web"}, tc.gen)
			if tc.reason == "" {
				if err != nil {
					t.Error(err)
				}
				return
			}
			failure(t, err, tc.reason, tc.want)
		})
	}
}

// TestWaitRolloutEnds: the wait ends when the cache sees the rollout
// complete; one that makes no progress for the deadline fails, saying
// where it stands.
func TestWaitRolloutEnds(t *testing.T) {
	t.Parallel()
	step := rollout.Step{Namespace: "ns", Kind: "Deployment", Name: "web"}
	m, client, clock, _ := fakeMover(t, deployment(t, 2, 2, 1))
	// the rollout completes while the wait pauses (its third reading of
	// the clock), after it saw it under way
	readings := 0
	m.now = func() time.Time {
		if readings++; readings == 3 {
			if _, err := client.Resource(deploymentsResource).Namespace("ns").Update(context.Background(), deployment(t, 2, 2, 3), metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
		}
		return clock.now()
	}
	if err := m.waitRollout(bounded(t, 10*time.Second), "deployments", step, 2); err != nil || readings < 3 {
		t.Errorf("completed after %d readings of the clock: %v", readings, err)
	}

	m, _, _, _ = fakeMover(t, deployment(t, 2, 2, 1))
	pastDeadline(m)
	err := m.waitRollout(bounded(t, 10*time.Second), "deployments", step, 2)
	failure(t, err, rollout.ReasonProgressDeadline, "no progress for 10s (1 of 3 new Pods have been updated)")
}

// TestPause: a wait fails once there was no progress for longer than the
// deadline (at the deadline it goes on), and when stopped; otherwise it
// returns at a change, or after a second without one.
func TestPause(t *testing.T) {
	t.Parallel()
	m, _, clock, _ := fakeMover(t)
	now := clock.now()
	closed := make(chan struct{})
	close(closed)
	if err := m.pause(context.Background(), closed, now.Add(-m.deadline), "1 of 3 Pods are ready"); err != nil {
		t.Errorf("at the deadline: %v", err)
	}
	err := m.pause(context.Background(), closed, now.Add(-m.deadline-time.Nanosecond), "1 of 3 Pods are ready")
	failure(t, err, rollout.ReasonProgressDeadline, "no progress for 10s (1 of 3 Pods are ready)")
	err = m.pause(cancelled(), make(chan struct{}), now, "1 of 3 Pods are ready")
	failure(t, err, rollout.ReasonInterrupted, "stopped waiting (1 of 3 Pods are ready)")

	start := time.Now()
	if err := m.pause(context.Background(), make(chan struct{}), now, "1 of 3 Pods are ready"); err != nil {
		t.Errorf("without a change: %v", err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("returned after %s without a change, want a second", waited)
	}
}

// TestGVROf: a resource restart lists has its group and version; another
// has none.
func TestGVROf(t *testing.T) {
	t.Parallel()
	if got := gvrOf("statefulsets"); got != statefulSetsResource {
		t.Errorf("statefulsets: %v", got)
	}
	if got := gvrOf("replicationcontrollers"); !got.Empty() {
		t.Errorf("replicationcontrollers: %v, want none", got)
	}
}

// TestCacheForbidden: a kind restart may not list ends the cache's start
// at once (not at the run's end) with an error naming the kind and the
// RBAC it needs.
func TestCacheForbidden(t *testing.T) {
	t.Parallel()
	kinds := map[schema.GroupVersionResource]string{}
	for _, r := range statusResources {
		kinds[r.gvr] = kindOf(r.gvr.Resource) + "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds)
	client.PrependReactor("list", "statefulsets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "", errors.New("no RBAC"))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := newRestartCache(client, "ns").start(ctx)
	if !errors.Is(err, errForbidden) || !strings.HasPrefix(err.Error(), "listing statefulsets.apps: ") ||
		!strings.Contains(err.Error(), "kubectl inject restart needs get, list and watch on statefulsets.apps (RBAC, see docs/restart.md)") || ctx.Err() != nil {
		t.Errorf("error %v (the run's context: %v), want the RBAC error at once", err, ctx.Err())
	}
}
