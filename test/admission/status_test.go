package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/fleet"
)

// runPlugin runs the built kubectl-inject as admin and returns stdout,
// stderr and the exit code.
func runPlugin(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	bin := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	cmd := exec.Command(bin, append([]string{"--kubeconfig", c.AdminKubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	code, stdout, stderr := testbin.Exec(t, cmd)
	t.Logf("kubectl-inject %s\n--- exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	return stdout, stderr, code
}

// TestStatusAdmissionPods: Pods of a ReplicaSet injected at admission
// count for the ReplicaSet in kubectl inject status (the built binary),
// and are listed by themselves as injected at admission; --check is 0
// while they are current. The namespace is labelled for admission and
// named in the binding, so the test holds with either binding.
func TestStatusAdmissionPods(t *testing.T) {
	c.Require(t)
	ctx := context.Background()
	const ns = "admitted"
	ensureNamespace(t, ns)
	labelled, err := client(t).Resource(namespaces).Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labelled.SetLabels(map[string]string{"sidecar.kinject.dev/inject": "enabled"})
	if _, err := client(t).Resource(namespaces).Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	probe := []byte(fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: %s}\nspec:\n  containers: [{name: app, image: busybox}]\n", ns))
	if out, errOut, code := runPlugin(t, "policy", "--apply", "--namespaces", ns); code != 0 {
		t.Fatalf("policy --apply: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() {
		if _, _, code := kubectlInject(t, "policy", "--delete"); code != 0 {
			t.Errorf("policy --delete: exit %d", code)
		}
		waitPolicy(t, probe, false)
	})
	waitPolicy(t, probe, true)

	var rsObj map[string]any
	if err := yaml.Unmarshal([]byte(strings.Replace(replicaSet, "namespace: shop", "namespace: "+ns, 1)), &rsObj); err != nil {
		t.Fatal(err)
	}
	rs, err := client(t).Resource(replicasets).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: rsObj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	template, _, _ := unstructured.NestedMap(rs.Object, "spec", "template")
	for i := 0; i < 2; i++ {
		got, err := client(t).Resource(pods).Namespace(ns).Create(ctx, ownedPod(rs, template), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if inits := initContainerNames(got); strings.Join(inits, ",") != "envoy" {
			t.Fatalf("pod %s was not injected at admission: init containers %v", got.GetName(), inits)
		}
	}

	out, _, code := runPlugin(t, "status", "-n", ns, "-o", "json")
	if code != 0 {
		t.Fatalf("status: exit %d", code)
	}
	var list struct {
		Items []fleet.Row `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for _, row := range list.Items {
		switch {
		case row.Kind == "ReplicaSet" && row.Name == "web":
			if row.Pods != 2 || row.PodsBehind != 0 {
				t.Errorf("replicaset.apps/web: pods %d, behind %d; want 2 Pods injected at admission, none behind", row.Pods, row.PodsBehind)
			}
		case row.Kind == "Pod" && row.Admission && row.State == fleet.Current:
			admitted++
		}
	}
	if admitted != 2 {
		t.Errorf("%d Pods listed as injected at admission and current, want 2:\n%s", admitted, out)
	}
	table, _, code := runPlugin(t, "status", "-n", ns, "rs/web", "--check")
	if code != 0 {
		t.Errorf("status --check: exit %d, want 0 (Pods current)", code)
	}
	if cells := strings.Fields(strings.Split(table, "\n")[1]); len(cells) < 4 || cells[0] != "replicaset.apps/web" || cells[3] != "2" {
		t.Errorf("table row %q, want replicaset.apps/web with PODS 2:\n%s", cells, table)
	}
}
