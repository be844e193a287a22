package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/test/cluster"
)

var c *cluster.Cluster

func TestMain(m *testing.M) {
	c = cluster.MustStart()
	os.Exit(c.Finish(m.Run()))
}

func TestClusterLive(t *testing.T) {
	c.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := c.AdminClient()
	if err != nil {
		t.Fatal(err)
	}

	const ns, name = "live", "web"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, deployment(name), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}

	out := kubectl(t, c.AdminKubeconfig, "get", "deploy", "-n", ns, "-o", "name")
	if strings.TrimSpace(out) != "deployment.apps/"+name {
		t.Fatalf("kubectl get deploy: got %q", out)
	}
	out = kubectl(t, c.AdminKubeconfig, "version", "-o", "json")
	if !strings.Contains(out, `"gitVersion": "v1.37.2"`) {
		t.Errorf("server version: %s", out)
	}

	// before the grant the viewer cannot even list.
	viewer, err := c.ViewerClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := viewer.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("viewer list before grant: want forbidden, got %v", err)
	}
	if err := c.GrantViewer(ctx, ns); err != nil {
		t.Fatal(err)
	}
	out = kubectl(t, c.ViewerKubeconfig, "get", "deploy", name, "-n", ns, "-o", "name")
	if strings.TrimSpace(out) != "deployment.apps/"+name {
		t.Fatalf("viewer kubectl get deploy: got %q", out)
	}

	patch := []byte(`{"metadata":{"labels":{"patched":"yes"}}}`)
	_, err = viewer.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("viewer patch: want 403 forbidden, got %v", err)
	}
	cmd := exec.Command("kubectl", "--kubeconfig", c.ViewerKubeconfig, "-n", ns,
		"patch", "deploy", name, "--type=merge", "-p", string(patch))
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "Forbidden") {
		t.Fatalf("viewer kubectl patch: want Forbidden error, got err=%v output=%s", err, b)
	}
	// admin still can.
	if _, err := admin.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("admin patch: %v", err)
	}
}

func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if s := stderr.String(); s != "" {
		t.Logf("kubectl %s stderr: %s", strings.Join(args, " "), s)
	}
	return string(out)
}

func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.invalid/app:1",
				}}},
			},
		},
	}
}
