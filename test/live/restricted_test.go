package live

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRestrictedNamespace: in a namespace that enforces Pod Security
// "restricted", a Deployment whose Pods pass it is injected live, and a Pod
// made from its injected template is admitted, with the sidecar (this
// cluster runs no controllers: the test creates the Pod the ReplicaSet
// would).
func TestRestrictedNamespace(t *testing.T) {
	c.Require(t)
	ns := bareNamespace(t)
	nsObj := get(t, "", namespaces, ns)
	nsObj.SetLabels(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	if _, err := client(t).Resource(namespaces).Update(context.Background(), nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	create(t, ns, deployments, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: app
        image: registry.local/app:1
        ports: [{containerPort: 3000}]
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
`)
	r := inject(t, "deploy/web", "-n", ns)
	expectCode(t, r, 0)
	d := get(t, ns, deployments, "web")
	tmpl, _, _ := unstructured.NestedMap(d.Object, "spec", "template")
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": tmpl["metadata"], "spec": tmpl["spec"]}}
	pod.SetName("web-1")
	got, err := client(t).Resource(pods).Namespace(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the injected Pod is refused: %v", err)
	}
	if names := strings.Join(containerNames(t, got, "spec"), ","); names != "envoy,app" {
		t.Errorf("containers %s, want the native sidecar envoy and app", names)
	}
	sidecars, _, _ := unstructured.NestedSlice(got.Object, "spec", "initContainers")
	if len(sidecars) != 1 {
		t.Fatalf("%d init containers, want the native sidecar", len(sidecars))
	}
	env, _, _ := unstructured.NestedSlice(sidecars[0].(map[string]any), "env")
	if len(env) != 1 || env[0].(map[string]any)["value"] != "3000" {
		t.Errorf("the sidecar does not proxy to the app's port 3000: env %v", env)
	}
	// The namespace enforces: a Pod that runs as root is refused.
	root := pod.DeepCopy()
	root.SetName("root")
	_ = unstructured.SetNestedField(root.Object, false, "spec", "securityContext", "runAsNonRoot")
	if _, err := client(t).Resource(pods).Namespace(ns).Create(context.Background(), root, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Error("a Pod that may run as root was admitted: PodSecurity is not enforcing")
	}
}
