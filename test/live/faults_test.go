package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kinject/kubectl-inject/test/cluster"
)

// TestServerGoesAway: the API server becomes unreachable after a few
// patches. Each object is either fully injected or untouched, every object
// gets a line, and the exit code is 1.
func TestServerGoesAway(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	const n = 12
	for i := range n {
		create(t, ns, deployments, deployment(fmt.Sprintf("w%02d", i), ", suite: outage"))
	}
	var patches atomic.Int32
	down := errors.New("dial tcp 127.0.0.1: connect: connection refused")
	r := runWrapped(t, func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && patches.Add(1) > 4 {
				return nil, down
			}
			return rt.RoundTrip(req)
		})
	}, "deployments", "-l", "suite=outage", "-n", ns, "--concurrency", "3")
	expectCode(t, r, 1)
	if got := strings.Count(r.stderr, "\n"); got < n+1 {
		t.Errorf("%d lines for %d objects", got, n)
	}
	expectStderr(t, r, "connection refused", "8 of 12 objects failed")
	injected := 0
	for i := range n {
		d := get(t, ns, deployments, fmt.Sprintf("w%02d", i))
		names := containerNames(t, d, "spec", "template", "spec")
		_, hasStatus := d.Object["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["annotations"]
		switch {
		case len(names) == 2 && hasStatus:
			injected++
		case len(names) == 1 && !hasStatus:
		default:
			t.Errorf("%s half-injected: containers %v, status annotation %v", d.GetName(), names, hasStatus)
		}
	}
	if injected != 4 {
		t.Errorf("%d injected, want the 4 patches that got through", injected)
	}
	// Running again once the server is back finishes the job.
	r = inject(t, "deployments", "-l", "suite=outage", "-n", ns)
	expectCode(t, r, 0)
	if strings.Count(r.stderr, " injected\n") != 8 || strings.Count(r.stderr, " unchanged\n") != 4 {
		t.Errorf("second run:\n%s", r.stderr)
	}
}

// TestAdmissionRejection: a ValidatingAdmissionPolicy refuses the sidecar in
// one namespace; only that object fails.
func TestAdmissionRejection(t *testing.T) {
	c.Require(t)
	blocked, open := namespace(t), namespace(t)
	create(t, blocked, deployments, deployment("web", ", suite: vap"))
	create(t, open, deployments, deployment("web", ", suite: vap"))
	policies := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	bindings := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
	create(t, "", policies, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-envoy}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [UPDATE]
      resources: [deployments]
  validations:
  - expression: "!object.spec.template.spec.containers.exists(c, c.name == 'envoy') && !(has(object.spec.template.spec.initContainers) && object.spec.template.spec.initContainers.exists(c, c.name == 'envoy'))"
    message: envoy sidecars are not allowed in this namespace`)
	create(t, "", bindings, fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-envoy}
spec:
  policyName: no-envoy
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: %s}`, blocked))
	// Wait until the policy is enforced (a server dry run is refused).
	probe := `{"spec":{"template":{"spec":{"containers":[{"name":"envoy","image":"x"}]}}}}`
	err := wait.PollUntilContextTimeout(ctx(t), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client(t).Resource(deployments).Namespace(blocked).Patch(ctx, "web", types.StrategicMergePatchType, []byte(probe), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "not allowed"), nil
	})
	if err != nil {
		t.Fatalf("policy never enforced: %v", err)
	}

	r := inject(t, "deployments", "-A", "-l", "suite=vap")
	expectCode(t, r, 1)
	expectStderr(t, r, blocked+": deployment.apps/web error: invalid: ", "envoy sidecars are not allowed in this namespace",
		open+": deployment.apps/web injected", "1 of 2 objects failed")
	if hasContainer(t, get(t, blocked, deployments, "web"), "envoy", "spec", "template", "spec") {
		t.Error("the refused object was changed")
	}
	if !hasContainer(t, get(t, open, deployments, "web"), "envoy", "spec", "template", "spec") {
		t.Error("the other namespace was not injected")
	}
}

// TestForbiddenOneNamespace: a user may patch in one namespace and only read
// in another; the first is injected, the second fails with forbidden.
func TestForbiddenOneNamespace(t *testing.T) {
	c.Require(t)
	allowed, readOnly := namespace(t), namespace(t)
	for _, n := range []string{allowed, readOnly} {
		create(t, n, deployments, deployment("web", ""))
		if err := c.GrantViewer(ctx(t), n); err != nil {
			t.Fatal(err)
		}
	}
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	rolebindings := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	create(t, allowed, roles, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: patcher}
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [patch]`)
	create(t, allowed, rolebindings, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: patcher}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: patcher}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %s}]`, cluster.ViewerUser))
	file := writeFile(t, "both.yaml", fmt.Sprintf("%s---\n%s",
		strings.Replace(deployment("web", ""), "  name: web\n", "  name: web\n  namespace: "+readOnly+"\n", 1),
		strings.Replace(deployment("web", ""), "  name: web\n", "  name: web\n  namespace: "+allowed+"\n", 1)))
	var r result
	err := wait.PollUntilContextTimeout(ctx(t), 200*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		// The viewer may not read the ConfigMaps of readOnly, so the check
		// of the sidecar's ConfigMap is left out there.
		r = run(t, runOpts{kubeconfig: c.ViewerKubeconfig}, "-f", file, "--allow-missing-references")
		return strings.Contains(r.stderr, "deployment.apps/web injected"), nil
	})
	if err != nil {
		t.Fatalf("the role never took effect:\n%s", r.stderr)
	}
	expectCode(t, r, 1)
	expectStderr(t, r, "deployment.apps/web error: forbidden: ", `cannot patch resource "deployments" in API group "apps" in the namespace "`+readOnly+`"`, "1 of 2 objects failed")
	if hasContainer(t, get(t, readOnly, deployments, "web"), "envoy", "spec", "template", "spec") {
		t.Error("read-only namespace changed")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// runWrapped runs kubectl-inject as admin with wrap around the transport.
func runWrapped(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper, args ...string) result {
	t.Helper()
	return run(t, runOpts{wrap: wrap}, args...)
}
