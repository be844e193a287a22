package live

import (
	"context"
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// recreate deletes a bare Pod and creates it again with the change. When
// the new Pod is refused, the original is created again, so the Pod is
// never lost.
func (p *Patcher) recreate(ctx context.Context, m *meta.RESTMapping, obj, modified *unstructured.Unstructured, res Result) (Result, error) {
	res.Warnings = append(res.Warnings, fmt.Sprintf("%s is a bare Pod: deleting it and creating it again with the change (--recreate); its containers restart", res.Ref))
	ri := p.Client.Resource(m.Resource).Namespace(obj.GetNamespace())
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	del := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	create := metav1.CreateOptions{FieldManager: p.FieldManager}
	if p.DryRun == dryrun.Server {
		del.DryRun = []string{metav1.DryRunAll}
		res.DryRun = dryrun.Server
	}
	res.Requests++
	if err := ri.Delete(ctx, obj.GetName(), del); err != nil {
		return res, fmt.Errorf("delete: %w", err)
	}
	if p.DryRun == dryrun.Server {
		return res, nil
	}
	if err := p.waitGone(ctx, m, obj); err != nil {
		return fail(res, "", fmt.Errorf("deleted, but %w; the new Pod was not created", err)), nil
	}
	fresh := forCreate(modified)
	res.Requests++
	out, err := ri.Create(ctx, fresh, create)
	if err == nil {
		res.Object = out
		return res, nil
	}
	if _, rerr := ri.Create(ctx, forCreate(obj), create); rerr != nil {
		return fail(res, "", fmt.Errorf("deleted, but creating it with the change failed (%w) and creating the original again failed too: %v", err, rerr)), nil
	}
	return fail(res, "", fmt.Errorf("creating it with the change failed, the original Pod was created again: %w", err)), nil
}

// waitGone waits until obj no longer exists (its finalizers and grace period
// have run).
func (p *Patcher) waitGone(ctx context.Context, m *meta.RESTMapping, obj *unstructured.Unstructured) error {
	timeout := p.RecreateTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ri := p.Client.Resource(m.Resource).Namespace(obj.GetNamespace())
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return cur.GetUID() != obj.GetUID(), nil
	})
	if err != nil {
		return fmt.Errorf("the Pod did not go away within %s: %w", timeout, err)
	}
	return nil
}

// forCreate strips what the server sets from a copy of obj.
func forCreate(obj *unstructured.Unstructured) *unstructured.Unstructured {
	u := obj.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}
