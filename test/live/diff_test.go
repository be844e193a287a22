package live

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// TestLiveDiff: --diff on a live object shows, and changes nothing, exactly
// the change the real PATCH then makes (the object's YAML before and after,
// without managedFields and resourceVersion), for inject and for uninject,
// client-side and server-side.
func TestLiveDiff(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ""))
	for _, step := range []struct {
		name string
		args []string
	}{
		{"inject", nil},
		{"uninject", []string{"--uninject"}},
		{"inject server-side", []string{"--server-side"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			before := get(t, ns, deployments, "web")
			d := inject(t, append([]string{"deploy/web", "-n", ns, "--diff", "--color", "never"}, step.args...)...)
			expectCode(t, d, 1)
			if d.requests["PATCH"] != 1 || get(t, ns, deployments, "web").GetResourceVersion() != before.GetResourceVersion() {
				t.Fatalf("--diff changed the object (requests %v)", d.requests)
			}
			expectCode(t, inject(t, append([]string{"deploy/web", "-n", ns}, step.args...)...), 0)
			after := get(t, ns, deployments, "web")
			var want strings.Builder
			if _, err := textdiff.Write(&want, "a", "b", render(t, before), render(t, after), textdiff.Options{}); err != nil {
				t.Fatal(err)
			}
			if body(d.stdout) != body(want.String()) {
				t.Errorf("--diff:\n%s\nthe PATCH made:\n%s", d.stdout, want.String())
			}
			if !strings.Contains(d.stdout, "--- live/"+ns+"/deployment.apps/web\n") {
				t.Errorf("diff headers: %s", d.stdout)
			}
		})
	}
	if r := inject(t, "deploy/web", "-n", ns, "--diff"); r.code != 0 || r.stdout != "" {
		t.Errorf("--diff of a current object: exit %d, output %q", r.code, r.stdout)
	}
	// As kubectl diff: an error exits 2, apart from "a change" (1).
	r := inject(t, "deploy/web", "deploy/missing", "-n", ns, "--diff")
	expectCode(t, r, 2)
	expectStderr(t, r, `"missing" not found`)
}

func render(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	c := obj.DeepCopy()
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	data, err := yaml.Marshal(c.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// body drops a diff's two header lines.
func body(diff string) string {
	lines := strings.SplitN(diff, "\n", 3)
	if len(lines) < 3 {
		return diff
	}
	return lines[2]
}
