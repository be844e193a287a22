package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
)

// createOwnedPods creates, for every Deployment, the ReplicaSet and the Pods
// its controllers would (no controller-manager runs): the ReplicaSet named
// after the template's hash, labeled pod-template-hash and controlled by
// the Deployment, and pods Pods from its template controlled by it. 32
// Deployments at a time.
func createOwnedPods(ctx context.Context, cs kubernetes.Interface, deps []appsv1.Deployment, pods int) error {
	return parallel(len(deps), 32, func(i int) error {
		d := &deps[i]
		rs, err := cs.AppsV1().ReplicaSets(d.Namespace).Create(ctx, replicaSetFor(d, pods), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create the ReplicaSet of %s/%s: %w", d.Namespace, d.Name, err)
		}
		for j := 0; j < pods; j++ {
			if _, err := cs.CoreV1().Pods(d.Namespace).Create(ctx, podFor(rs), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create a Pod of %s/%s: %w", rs.Namespace, rs.Name, err)
			}
		}
		return nil
	})
}

// podTemplateHash is a stand-in for the Deployment controller's hash of the
// template (FNV-32a, encoded the same way; of the JSON, not of its deep
// printing).
func podTemplateHash(t *corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	b, _ := json.Marshal(t)
	h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// copyMap is a copy of m with room for one more key.
func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// replicaSetFor is the first ReplicaSet of d as the Deployment controller
// makes it.
func replicaSetFor(d *appsv1.Deployment, replicas int) *appsv1.ReplicaSet {
	hash := podTemplateHash(&d.Spec.Template)
	tmpl := d.Spec.Template.DeepCopy()
	tmpl.Labels = copyMap(tmpl.Labels)
	tmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	sel := d.Spec.Selector.DeepCopy()
	sel.MatchLabels = copyMap(sel.MatchLabels)
	sel.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	r := int32(replicas)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:      d.Name + "-" + hash,
			Namespace: d.Namespace,
			Labels:    copyMap(tmpl.Labels),
			Annotations: map[string]string{
				"deployment.kubernetes.io/desired-replicas": fmt.Sprint(replicas),
				"deployment.kubernetes.io/max-replicas":     fmt.Sprint(replicas + 1),
				"deployment.kubernetes.io/revision":         "1",
			},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: &r, Selector: sel, Template: *tmpl},
	}
}

// podFor is a Pod of rs as the ReplicaSet controller makes it (the API
// server completes the generated name).
func podFor(rs *appsv1.ReplicaSet) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    rs.Name + "-",
			Namespace:       rs.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
		},
		Spec: t.Spec,
	}
}
