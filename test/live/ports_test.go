package live

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSidecarPortsLive: a live Deployment whose app uses one of the
// default sidecar's ports (Envoy's admin API on 9901, reserved; its proxy
// and stats listeners, 10000 and 9902), or names one as its app port, is
// refused with a line naming both containers and left as it was; the
// others of the same command are injected.
func TestSidecarPortsLive(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	onPort := func(name, port string) string {
		return strings.Replace(deployment(name, ""), "containerPort: 8080", "containerPort: "+port, 1)
	}
	for _, d := range []string{onPort("on-admin", "9901"), onPort("on-proxy", "10000"), onPort("on-stats", "9902"),
		strings.Replace(deployment("override-admin", ""), "      labels: {app: override-admin}\n", "      labels: {app: override-admin}\n      annotations: {sidecar.kinject.dev/app-port: \"9901\"}\n", 1),
		deployment("fine", "")} {
		create(t, ns, deployments, d)
	}
	r := inject(t, "deploy/on-admin", "deploy/on-proxy", "deploy/on-stats", "deploy/override-admin", "deploy/fine", "-n", ns)
	expectCode(t, r, 1)
	expectStderr(t, r,
		`deployment.apps/on-admin error: conflict: spec.template.spec.containers: sidecar "envoy" binds port 9901 (Envoy's admin API on 127.0.0.1), which container "app" already uses`,
		`deployment.apps/on-proxy error: conflict: spec.template.spec.containers: sidecar "envoy" port 10000 is already used by container "app"`,
		`deployment.apps/on-stats error: conflict: spec.template.spec.containers: sidecar "envoy" port 9902 is already used by container "app"`,
		`deployment.apps/override-admin error: invalid_object: spec.template.metadata.annotations["sidecar.kinject.dev/app-port"]: "9901" is a port of sidecar "envoy" (Envoy's admin API on 127.0.0.1), not the app's`,
		"deployment.apps/fine injected",
	)
	for _, name := range []string{"on-admin", "on-proxy", "on-stats", "override-admin"} {
		obj := get(t, ns, deployments, name)
		if hasContainer(t, obj, "envoy", "spec", "template", "spec") {
			t.Errorf("%s: injected", name)
		}
		if _, ok := obj.GetAnnotations()[naming.StatusAnnotation]; ok {
			t.Errorf("%s: carries a status record", name)
		}
	}
	fine := get(t, ns, deployments, "fine")
	if !hasContainer(t, fine, "envoy", "spec", "template", "spec") {
		t.Fatal("fine: not injected")
	}
	// The bootstrap the live object now carries runs as Envoy loads it.
	spec, _, _ := unstructured.NestedMap(fine.Object, "spec", "template", "spec")
	if b, err := envoycheck.Pod(spec); err != nil || b == nil {
		t.Errorf("fine: the sidecar's bootstrap: %v (found: %v)", err, b != nil)
	}
}
