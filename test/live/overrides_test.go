package live

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"
)

// patchRecorder keeps the body of every PATCH a run sends.
type patchRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (pr *patchRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch && req.Body != nil {
			data, err := io.ReadAll(req.Body)
			if err != nil {
				return nil, err
			}
			_ = req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(data))
			pr.mu.Lock()
			pr.bodies = append(pr.bodies, string(data))
			pr.mu.Unlock()
		}
		return next.RoundTrip(req)
	})
}

// withOverrides is a Deployment that asks for its own sidecar values: the
// cpu request on the object, the memory request on its pod template.
func withOverrides(name string) string {
	m := deployment(name, "")
	m = strings.Replace(m, "  name: "+name+"\n", "  name: "+name+"\n  annotations: {sidecar.kinject.dev/cpu-request: 100m}\n", 1)
	return strings.Replace(m, "    metadata:\n", "    metadata:\n      annotations: {sidecar.kinject.dev/memory-request: 128Mi}\n", 1)
}

// envoyResources returns the injected sidecar's resources as JSON-ish YAML.
func envoyResources(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	for _, list := range []string{"initContainers", "containers"} {
		items, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", list)
		for _, item := range items {
			c := item.(map[string]any)
			if c["name"] == "envoy" {
				res, _ := c["resources"].(map[string]any)
				return res
			}
		}
	}
	t.Fatalf("no envoy container")
	return nil
}

// TestOverrideChange: a Deployment's override annotations set its
// sidecar's values. When one changes (cpu-request 100m -> 500m), --check
// reports the object as not current without writing, and injecting again
// sends exactly one PATCH that holds only what changed: the cpu request
// inside the envoy container's entry and the status record; not the image,
// the volumes, the other resources or the app.
func TestOverrideChange(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, withOverrides("web"))
	expectCode(t, inject(t, "deploy/web", "-n", ns), 0)
	obj := get(t, ns, deployments, "web")
	res := envoyResources(t, obj)
	if cpu, mem := res["requests"].(map[string]any)["cpu"], res["requests"].(map[string]any)["memory"]; cpu != "100m" || mem != "128Mi" {
		t.Fatalf("injected requests cpu %v memory %v, want 100m and 128Mi from the annotations", cpu, mem)
	}
	limits := field(t, obj, "spec", "template", "spec", "initContainers")

	annotate(t, ns, "web", "sidecar.kinject.dev/cpu-request", "500m")
	obj = get(t, ns, deployments, "web")

	r := inject(t, "deploy/web", "-n", ns, "--check")
	expectCode(t, r, 1)
	expectStderr(t, r, "deployment.apps/web would be updated")
	if r.writes() != 0 {
		t.Errorf("--check sent writes: %v", r.requests)
	}

	pr := &patchRecorder{}
	r = run(t, runOpts{wrap: pr.wrap}, "deploy/web", "-n", ns)
	expectCode(t, r, 0)
	expectStderr(t, r, "deployment.apps/web updated\n")
	if r.writes() != 1 || len(pr.bodies) != 1 {
		t.Fatalf("want exactly one PATCH and no other write, got %v (%d bodies)", r.requests, len(pr.bodies))
	}
	body := pr.bodies[0]
	t.Logf("PATCH body: %s", body)
	var patch map[string]any
	if err := json.Unmarshal([]byte(body), &patch); err != nil {
		t.Fatal(err)
	}
	// The record is checked on its own; the rest must be exactly this:
	// the cpu request in the envoy container's entry (and the strategic
	// merge patch's list order), nothing of the image, the volumes, the
	// other resources or the app.
	recorded, _, _ := unstructured.NestedString(patch, "spec", "template", "metadata", "annotations", naming.StatusAnnotation)
	unstructured.RemoveNestedField(patch, "spec", "template", "metadata", "annotations", naming.StatusAnnotation)
	rest, _ := json.Marshal(patch)
	want := `{"metadata":{"resourceVersion":"` + obj.GetResourceVersion() + `"},"spec":{"template":{"metadata":{"annotations":{}},` +
		`"spec":{"$setElementOrder/initContainers":[{"name":"envoy"}],"initContainers":[{"name":"envoy","resources":{"requests":{"cpu":"500m"}}}]}}}}`
	if string(rest) != want {
		t.Errorf("the PATCH besides the record:\n%s\nwant:\n%s", rest, want)
	}
	st, err := record.Parse(naming.StatusAnnotation, recorded)
	if err != nil || len(st.Values) != 3 || st.Values["cpu-request"] != "500m" || st.Values["memory-request"] != "128Mi" || st.Values["app-port"] != "8080" {
		t.Errorf("the PATCH's record %q (%v): want the values cpu-request=500m and memory-request=128Mi, and app-port=8080 from the Pod", recorded, err)
	}

	after := get(t, ns, deployments, "web")
	if got := envoyResources(t, after)["requests"].(map[string]any)["cpu"]; got != "500m" {
		t.Errorf("stored cpu request %v, want 500m", got)
	}
	if field(t, after, "spec", "template", "spec", "initContainers") != strings.Replace(limits, "cpu: 100m", "cpu: 500m", 1) {
		t.Errorf("the sidecar changed beyond the cpu request:\n%s", field(t, after, "spec", "template", "spec", "initContainers"))
	}
	if r := inject(t, "deploy/web", "-n", ns); r.writes() != 0 {
		t.Errorf("injecting a current object sent writes: %v", r.requests)
	}
}

// TestOverrideBadValue: a bad override value fails that object with a line
// naming the object and the annotation, sends nothing for it, and the
// other objects are still injected.
func TestOverrideBadValue(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, strings.Replace(withOverrides("bad"), "cpu-request: 100m", "cpu-request: lots", 1))
	create(t, ns, deployments, withOverrides("good"))
	r := inject(t, "deploy/bad", "deploy/good", "-n", ns)
	expectCode(t, r, 1)
	expectStderr(t, r, `deployment.apps/bad error: `, `"sidecar.kinject.dev/cpu-request"`, `"lots" is not a resource quantity`, "deployment.apps/good injected", "1 of 2 objects failed")
	if r.requests[http.MethodPatch] != 1 {
		t.Errorf("want one PATCH (the good object), got %v", r.requests)
	}
	if hasContainer(t, get(t, ns, deployments, "bad"), "envoy", "spec", "template", "spec") {
		t.Error("the object with a bad value was injected")
	}
}
