package cluster_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// TestControlPlane starts a cluster with its control plane: a Deployment
// gets its ReplicaSet and Pod, the Pod is bound to a kwok Node and
// becomes Ready; a Pod labelled to be held stays NotReady.
func TestControlPlane(t *testing.T) {
	c.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	cp, err := cluster.StartWith(ctx, cluster.Options{ControlPlane: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	t.Logf("control plane up in %s with Nodes %v", time.Since(start).Round(100*time.Millisecond), cp.Nodes)
	admin, err := cp.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	d := deployment("web")
	if _, err := admin.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	held := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Labels: map[string]string{cluster.HoldLabel: cluster.HoldNever}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}}},
	}
	if _, err := admin.CoreV1().Pods("default").Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := admin.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.AvailableReplicas == 1, nil
	})
	if err != nil {
		pods, _ := admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		for _, p := range pods.Items {
			t.Logf("pod %s/%s node=%q phase=%s conditions=%v", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
		}
		rs, _ := admin.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
		for _, r := range rs.Items {
			t.Logf("rs %s status=%+v", r.Name, r.Status)
		}
		ev, _ := admin.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		for _, e := range ev.Items {
			t.Logf("event %s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
		}
		t.Fatalf("the Deployment never got an available Pod: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := admin.CoreV1().Pods("default").Get(ctx, "held", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("the held Pod never ran: %v", err)
	}
	p, _ := admin.CoreV1().Pods("default").Get(ctx, "held", metav1.GetOptions{})
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status != corev1.ConditionFalse {
			t.Errorf("the held Pod is Ready: %+v", cond)
		}
	}
}
