package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestDeploymentLifecycle: inject, inject again (no write at all), uninject
// (the template is exactly the original again).
func TestDeploymentLifecycle(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	orig := create(t, ns, deployments, deployment("web", ""))
	tmpl := field(t, orig, "spec", "template")

	r := inject(t, "deployment/web", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web injected\n")
	if r.requests["PATCH"] != 1 || r.requests["PUT"] != 0 {
		t.Errorf("want exactly one PATCH and no PUT, got %v", r.requests)
	}
	injected := get(t, ns, deployments, "web")
	if !hasContainer(t, injected, "envoy", "spec", "template", "spec") {
		t.Fatalf("no envoy container: %v", containerNames(t, injected, "spec", "template", "spec"))
	}
	if injected.GetAnnotations()[naming.StatusAnnotation] != "" {
		t.Error("status annotation on the object instead of its pod template")
	}

	t.Run("second run sends nothing", func(t *testing.T) {
		r := inject(t, "deployment/web", "-n", ns)
		expectCode(t, r, 0)
		expectStderr(t, r, "deployment.apps/web unchanged\n")
		if r.writes() != 0 {
			t.Errorf("second run sent writes: %v", r.requests)
		}
		again := get(t, ns, deployments, "web")
		if again.GetResourceVersion() != injected.GetResourceVersion() || again.GetGeneration() != injected.GetGeneration() {
			t.Errorf("object changed: rv %s -> %s, generation %d -> %d", injected.GetResourceVersion(), again.GetResourceVersion(), injected.GetGeneration(), again.GetGeneration())
		}
	})

	t.Run("check", func(t *testing.T) {
		expectCode(t, inject(t, "deployment/web", "-n", ns, "--check"), 0)
		r := inject(t, "deployment/web", "-n", ns, "--check", "--image", "envoyproxy/envoy:v1.99.0")
		expectCode(t, r, 1)
		expectStderr(t, r, "deployment.apps/web would be updated")
		if r.writes() != 0 {
			t.Errorf("--check sent writes: %v", r.requests)
		}
	})

	t.Run("uninject restores the template", func(t *testing.T) {
		r := inject(t, "deployment/web", "-n", ns, "--uninject")
		expectCode(t, r, 0)
		expectStderr(t, r, "deployment.apps/web uninjected\n")
		if got := field(t, get(t, ns, deployments, "web"), "spec", "template"); got != tmpl {
			t.Errorf("template after uninject:\n%s\nwant:\n%s", got, tmpl)
		}
		r = inject(t, "deployment/web", "-n", ns, "--uninject")
		expectStderr(t, r, "deployment.apps/web skipped: not_injected")
		if r.writes() != 0 {
			t.Errorf("uninject of a clean object sent writes: %v", r.requests)
		}
	})
}

// TestWorkloadKinds injects each built-in workload kind at its pod template.
func TestWorkloadKinds(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	podSpec := `
        spec:
          containers:
          - name: app
            image: busybox`
	cases := []struct {
		name, ref string
		gvr       schema.GroupVersionResource
		manifest  string
		path      []string
	}{
		{"statefulset", "statefulset.apps/db", statefulsets, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: app
        image: postgres`, []string{"spec", "template", "spec"}},
		{"daemonset", "daemonset.apps/agent", daemonsets, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: app
        image: fluentd`, []string{"spec", "template", "spec"}},
		{"cronjob", "cronjob.batch/nightly", cronjobs, `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        metadata: {}` + podSpec + `
          restartPolicy: OnFailure`, []string{"spec", "jobTemplate", "spec", "template", "spec"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := create(t, ns, tc.gvr, tc.manifest)
			r := inject(t, tc.ref, "-n", ns)
			expectCode(t, r, 0)
			expectStderr(t, r, tc.ref+" injected")
			if got := get(t, ns, tc.gvr, obj.GetName()); !hasContainer(t, got, "envoy", tc.path...) {
				t.Errorf("no envoy: %v", containerNames(t, got, tc.path...))
			}
			r = inject(t, tc.ref, "-n", ns, "--uninject")
			expectCode(t, r, 0)
			if got := get(t, ns, tc.gvr, obj.GetName()); field(t, got, tc.path...) != field(t, obj, tc.path...) {
				t.Errorf("uninject did not restore %v", tc.path)
			}
		})
	}
}

// TestCustomKind injects a CRD's pod template named with --pod-template-path,
// through a resourceVersion-guarded merge patch.
func TestCustomKind(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, "", crds, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.example.com}
spec:
  group: example.com
  names: {kind: Rollout, plural: rollouts, singular: rollout}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true`)
	rollouts := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "rollouts"}
	err := wait.PollUntilContextTimeout(ctx(t), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client(t).Resource(rollouts).Namespace(ns).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("CRD not served: %v", err)
	}
	obj := create(t, ns, rollouts, `apiVersion: example.com/v1
kind: Rollout
metadata: {name: web}
spec:
  strategy: {canary: {}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx`)

	r := inject(t, "rollouts.example.com/web", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "rollout.example.com/web skipped: not_a_workload")

	r = inject(t, "rollouts.example.com/web", "-n", ns, "--pod-template-path", "Rollout.example.com=spec.template")
	expectCode(t, r, 0)
	expectStderr(t, r, "rollout.example.com/web injected")
	got := get(t, ns, rollouts, "web")
	if !hasContainer(t, got, "envoy", "spec", "template", "spec") || !hasContainer(t, got, "app", "spec", "template", "spec") {
		t.Errorf("containers: %v", containerNames(t, got, "spec", "template", "spec"))
	}
	r = inject(t, "rollouts.example.com/web", "-n", ns, "--pod-template-path", "Rollout.example.com=spec.template", "--uninject", "--server-side")
	expectCode(t, r, 0)
	expectStderr(t, r, "server-side apply is not used for custom kinds", "rollout.example.com/web uninjected")
	if field(t, get(t, ns, rollouts, "web"), "spec") != field(t, obj, "spec") {
		t.Error("uninject did not restore the spec")
	}
}

// TestOwnedPodInjectsDeployment: pod/x owned by a ReplicaSet owned by a
// Deployment injects the Deployment and says so. No controller runs here, so
// the test creates the ReplicaSet and Pod itself.
func TestOwnedPodInjectsDeployment(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	d := create(t, ns, deployments, deployment("web", ""))
	rs := create(t, ns, replicasets, fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-5d4f8
  labels: {app: web}
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: web, uid: %s, controller: true}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "nginx:1.27"}]`, d.GetUID()))
	pod := create(t, ns, pods, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: web-5d4f8-abcde
  labels: {app: web}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-5d4f8, uid: %s, controller: true}
spec:
  containers: [{name: app, image: "nginx:1.27"}]`, rs.GetUID()))

	r := inject(t, "pod/web-5d4f8-abcde", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web injected (from pod/web-5d4f8-abcde via replicaset.apps/web-5d4f8)")
	if !hasContainer(t, get(t, ns, deployments, "web"), "envoy", "spec", "template", "spec") {
		t.Error("deployment not injected")
	}
	if got := get(t, ns, pods, pod.GetName()); got.GetResourceVersion() != pod.GetResourceVersion() {
		t.Error("the pod was changed")
	}
	if got := get(t, ns, replicasets, rs.GetName()); got.GetResourceVersion() != rs.GetResourceVersion() {
		t.Error("the replicaset was changed")
	}
}

// TestBarePod: refused with an explanation; --recreate deletes and creates
// it again with the sidecar.
func TestBarePod(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	pod := create(t, ns, pods, `apiVersion: v1
kind: Pod
metadata: {name: solo, labels: {app: solo}}
spec:
  containers: [{name: app, image: nginx}]`)

	r := inject(t, "pod/solo", "-n", ns)
	expectCode(t, r, 1)
	expectStderr(t, r, "pod/solo error: bare_pod: containers cannot be added", "--recreate")
	if r.writes() != 0 {
		t.Errorf("refused pod got writes: %v", r.requests)
	}
	if got := get(t, ns, pods, "solo"); got.GetResourceVersion() != pod.GetResourceVersion() {
		t.Error("pod changed")
	}

	r = inject(t, "pod/solo", "-n", ns, "--recreate")
	expectCode(t, r, 0)
	expectStderr(t, r, "Warning: pod/solo is a bare Pod: deleting it", "pod/solo injected")
	got := get(t, ns, pods, "solo")
	if got.GetUID() == pod.GetUID() {
		t.Error("pod was not recreated")
	}
	if !hasContainer(t, got, "envoy", "spec") || got.GetLabels()["app"] != "solo" {
		t.Errorf("recreated pod: containers %v labels %v", containerNames(t, got, "spec"), got.GetLabels())
	}
}

// TestJobRefused: a Job's pod template is immutable.
func TestJobRefused(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	job := create(t, ns, jobs, `apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: app, image: busybox}]`)
	r := inject(t, "job/once", "-n", ns)
	expectCode(t, r, 1)
	expectStderr(t, r, "job.batch/once error: immutable_template: a Job's pod template cannot be changed")
	if got := get(t, ns, jobs, "once"); got.GetResourceVersion() != job.GetResourceVersion() {
		t.Error("job changed")
	}
}

// TestSelection covers -l, --all, -A and -f naming live objects, and that
// one failing object does not stop the others.
func TestSelection(t *testing.T) {
	c.Require(t)
	ns, other := namespace(t), namespace(t)
	for _, n := range []string{"a1", "a2"} {
		create(t, ns, deployments, deployment(n, ", tier: a"))
	}
	create(t, ns, deployments, deployment("b1", ", tier: b"))
	create(t, other, deployments, deployment("c1", ", tier: c"))
	injectedNames := func(ns string) []string {
		list, err := client(t).Resource(deployments).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range list.Items {
			if hasContainer(t, &d, "envoy", "spec", "template", "spec") {
				out = append(out, d.GetName())
			}
		}
		return out
	}

	r := inject(t, "deployments", "-l", "tier=a", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/a1 injected\ndeployment.apps/a2 injected\n")
	if got := strings.Join(injectedNames(ns), ","); got != "a1,a2" {
		t.Errorf("-l injected %s", got)
	}

	r = inject(t, "deployments", "--all", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/a1 unchanged\ndeployment.apps/a2 unchanged\ndeployment.apps/b1 injected\n")

	r = inject(t, "deployments", "-A", "-l", "tier=c")
	expectCode(t, r, 0)
	expectStderr(t, r, other+": deployment.apps/c1 injected")

	r = run(t, runOpts{stdin: deployment("b1", "")}, "-f", "-", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/b1 unchanged")

	file := writeFile(t, "app.yaml", deployment("a1", "")+"---\n"+deployment("missing", ""))
	r = inject(t, "-f", file, "-n", ns, "--uninject")
	expectCode(t, r, 1)
	expectStderr(t, r, "deployment.apps/a1 uninjected", `"missing" not found`, "1 of 2 objects failed")
	if got := strings.Join(injectedNames(ns), ","); got != "a2,b1" {
		t.Errorf("after -f uninject: %s", got)
	}
}

// TestDryRun: client and server dry runs print the result and leave the
// object unchanged.
func TestDryRun(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	orig := create(t, ns, deployments, deployment("web", ""))
	for _, mode := range []string{"client", "server"} {
		t.Run(mode, func(t *testing.T) {
			r := inject(t, "deployment/web", "-n", ns, "--dry-run="+mode, "-o", "yaml")
			expectCode(t, r, 0)
			suffix := map[string]string{"client": " (dry run)", "server": " (server dry run)"}[mode]
			expectStderr(t, r, "deployment.apps/web injected"+suffix)
			if !strings.Contains(r.stdout, "name: envoy") || !strings.Contains(r.stdout, "kind: Deployment") {
				t.Errorf("-o yaml lacks the injected object:\n%s", r.stdout)
			}
			if got := get(t, ns, deployments, "web"); got.GetResourceVersion() != orig.GetResourceVersion() {
				t.Error("dry run changed the object")
			}
			if mode == "client" && r.writes() != 0 {
				t.Errorf("client dry run sent writes: %v", r.requests)
			}
		})
	}
	r := inject(t, "deployment/web", "-n", ns, "-o", "name")
	expectCode(t, r, 0)
	if r.stdout != "deployment.apps/web\n" {
		t.Errorf("-o name printed %q", r.stdout)
	}
}

// TestServerSide: apply owns only the injected fields; uninject is an apply
// that drops them.
func TestServerSide(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	orig := create(t, ns, deployments, deployment("web", ""))
	r := inject(t, "deployment/web", "-n", ns, "--server-side")
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web injected")
	got := get(t, ns, deployments, "web")
	if !hasContainer(t, got, "envoy", "spec", "template", "spec") {
		t.Fatal("no envoy")
	}
	var applied bool
	for _, mf := range got.GetManagedFields() {
		if mf.Manager == "kubectl-inject" && mf.Operation == metav1.ManagedFieldsOperationApply {
			applied = true
			fields := string(mf.FieldsV1.Raw)
			if strings.Contains(fields, `"k:{\"name\":\"app\"}"`) || strings.Contains(fields, "f:replicas") {
				t.Errorf("kubectl-inject owns fields it did not add: %s", fields)
			}
		}
	}
	if !applied {
		t.Errorf("no Apply entry for kubectl-inject: %+v", got.GetManagedFields())
	}
	if r := inject(t, "deployment/web", "-n", ns, "--server-side"); r.writes() != 0 {
		t.Errorf("second apply sent writes: %v", r.requests)
	}
	r = inject(t, "deployment/web", "-n", ns, "--server-side", "--uninject")
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web uninjected")
	if r.requests["PATCH"] != 1 {
		t.Errorf("uninject by apply should be one request: %v", r.requests)
	}
	if field(t, get(t, ns, deployments, "web"), "spec", "template") != field(t, orig, "spec", "template") {
		t.Error("server-side uninject did not restore the template")
	}
}

// TestTemplateConfigMap reads the template from the seed's ConfigMap format
// in the cluster.
func TestTemplateConfigMap(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, configmaps, `apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-initializer}
data:
  config: |
    containers:
      - name: proxy
        image: "envoyproxy/envoy:v1.30.0"
        ports:
          - containerPort: 10001
    volumes:
      - name: proxy-conf
        configMap:
          name: proxy`)
	create(t, ns, configmaps, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: proxy}\n")
	create(t, ns, deployments, deployment("web", ""))
	expectCode(t, inject(t, "deployment/web", "-n", ns), 0) // the default envoy first
	r := inject(t, "deployment/web", "-n", ns, "--template-configmap", ns+"/envoy-initializer")
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web updated")
	got := get(t, ns, deployments, "web")
	if names := strings.Join(containerNames(t, got, "spec", "template", "spec"), ","); names != "app,proxy" {
		t.Errorf("containers after switching templates: %s, want app,proxy", names)
	}
	if vols := field(t, got, "spec", "template", "spec", "volumes"); strings.Contains(vols, "envoy-conf") || !strings.Contains(vols, "proxy-conf") {
		t.Errorf("volumes after switching templates:\n%s", vols)
	}
	r = inject(t, "deployment/web", "-n", ns, "--template-configmap", "no-such-cm")
	expectCode(t, r, 1)
	expectStderr(t, r, "no-such-cm", "not found")
}

// TestForbidden: a user who may get but not patch gets a clear error and
// nothing changes.
func TestForbidden(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	orig := create(t, ns, deployments, deployment("web", ""))
	if err := c.GrantViewer(ctx(t), ns); err != nil {
		t.Fatal(err)
	}
	// The viewer may not read ConfigMaps either: without the flag, the
	// check of the sidecar's ConfigMap would fail first.
	r := run(t, runOpts{kubeconfig: c.ViewerKubeconfig}, "deployment/web", "-n", ns, "--allow-missing-references")
	expectCode(t, r, 1)
	expectStderr(t, r, "deployment.apps/web error: forbidden:", `User "viewer" cannot patch resource "deployments"`)
	if got := get(t, ns, deployments, "web"); got.GetResourceVersion() != orig.GetResourceVersion() {
		t.Error("object changed")
	}
}

// TestConcurrentWriter: another writer changes the object between our read
// and our patch; the patch is refused (resourceVersion), retried on a fresh
// read, and the other writer's change survives.
func TestConcurrentWriter(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ""))
	other := func() {
		d := get(t, ns, deployments, "web")
		_ = unstructured.SetNestedField(d.Object, int64(3), "spec", "replicas")
		d.SetAnnotations(map[string]string{"other-writer": "was-here"})
		if _, err := client(t).Resource(deployments).Namespace(ns).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
			t.Errorf("other writer: %v", err)
		}
	}
	r := run(t, runOpts{beforeWrite: other}, "deployment/web", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web injected")
	if r.requests["PATCH"] != 2 {
		t.Errorf("want a refused PATCH and a retried one, got %v", r.requests)
	}
	got := get(t, ns, deployments, "web")
	replicas, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
	if got.GetAnnotations()["other-writer"] != "was-here" || replicas != 3 {
		t.Errorf("the other writer's change was lost: replicas %d, annotations %v", replicas, got.GetAnnotations())
	}
	if !hasContainer(t, got, "envoy", "spec", "template", "spec") {
		t.Error("no envoy after retry")
	}
}

// TestSecretsNeverPrinted: objects without a pod template are reported by
// name only; their content (Secret data) is never printed.
func TestSecretsNeverPrinted(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	create(t, ns, secrets, "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\nstringData: {password: hunter2-very-secret}\n")
	for _, output := range []string{"yaml", "json", "name"} {
		r := inject(t, "secrets", "--all", "-n", ns, "-o", output)
		expectCode(t, r, 0)
		expectStderr(t, r, "secret/db skipped: not_a_workload")
		if strings.Contains(r.stdout+r.stderr, "aHVudGVyMi") || strings.Contains(r.stdout+r.stderr, "hunter2") {
			t.Errorf("-o %s printed the secret:\n%s", output, r.stdout)
		}
	}
}
