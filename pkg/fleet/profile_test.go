package fleet_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// logAgent is a second sidecar that does not clash with the default one.
func logAgent(t *testing.T, profile string) *inject.Injector {
	t.Helper()
	cfg, err := inject.ParseConfig([]byte("containers: [{name: log-agent, image: fluent/fluent-bit:3.0}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := inject.New(cfg.Template, inject.Settings{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func defaultInjector(t *testing.T) *inject.Injector {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestBuildProfile: a report on a profile reads that profile's records
// only: a workload carrying only the default profile's sidecar is not
// injected for it, and a Pod is behind only when its record of that
// profile differs.
func TestBuildProfile(t *testing.T) {
	logs := logAgent(t, "logs")
	both := injected(t, logs, manifestOf(t, injected(t, defaultInjector(t), strings.ReplaceAll(deploy, "NAME", "both"))))
	onlyDefault := injected(t, defaultInjector(t), strings.ReplaceAll(deploy, "NAME", "default"))
	// A Pod made before the logs profile was injected: it has the default
	// record only.
	tpl, _, _ := unstructured.NestedStringMap(onlyDefault.Object, "spec", "template", "metadata", "annotations")
	oldPod := pod(t, "both-a", "both", tpl)

	rows := fleet.Build(logs, []*unstructured.Unstructured{both, onlyDefault, oldPod})
	got := describe(rows)
	want := "deployment.apps/both current profile=logs pods=1 behind=1\ndeployment.apps/default not-injected profile=logs pods=0 behind=0"
	if got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	if rows[0].RecordedTemplate != logs.TemplateHash() || len(rows[0].Images) != 1 || rows[0].Images[0] != "log-agent=fluent/fluent-bit:3.0" {
		t.Errorf("the logs profile's record and sidecar: %+v", rows[0])
	}
}

// TestBuildOverrides: "current" means the template and the override values
// the annotations ask for now; after an annotation changed, the row is
// outdated and says why, and a Pod that runs the old values is behind the
// re-injected workload although the template hash is the same.
func TestBuildOverrides(t *testing.T) {
	in := defaultInjector(t)
	manifest := strings.Replace(strings.ReplaceAll(deploy, "NAME", "web"), "uid: uid-web}", "uid: uid-web, annotations: {sidecar.kinject.dev/cpu-request: 100m}}", 1)
	before := injected(t, in, manifest)
	changed := before.DeepCopy()
	changed.SetAnnotations(map[string]string{"sidecar.kinject.dev/cpu-request": "500m"})

	rows := fleet.Build(in, []*unstructured.Unstructured{changed})
	if len(rows) != 1 || rows[0].State != fleet.Outdated || !strings.Contains(rows[0].Message, "override annotations") ||
		rows[0].RecordedValues["cpu-request"] != "100m" || rows[0].RecordedTemplate != rows[0].CurrentTemplate {
		t.Fatalf("annotation changed: %+v", rows)
	}

	after := injected(t, in, manifestOf(t, changed))
	tpl, _, _ := unstructured.NestedStringMap(before.Object, "spec", "template", "metadata", "annotations")
	oldPod := pod(t, "web-a", "web", tpl)
	newTpl, _, _ := unstructured.NestedStringMap(after.Object, "spec", "template", "metadata", "annotations")
	newPod := pod(t, "web-b", "web", newTpl)
	rows = fleet.Build(in, []*unstructured.Unstructured{after, oldPod, newPod})
	if got, want := describe(rows), "deployment.apps/web current profile= pods=2 behind=1"; got != want {
		t.Errorf("rows:\n%s\nwant:\n%s", got, want)
	}
	if rows[0].RecordedValues["cpu-request"] != "500m" {
		t.Errorf("recorded values %v, want cpu-request=500m", rows[0].RecordedValues)
	}
}

// pod returns a Pod controlled directly by the Deployment uid-OWNER (the
// report folds any controller chain it lists) with annotations.
func pod(t *testing.T, name, owner string, annotations map[string]string) *unstructured.Unstructured {
	t.Helper()
	p := object(t, `apiVersion: v1
kind: Pod
metadata:
  name: `+name+`
  namespace: ns
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: `+owner+`, uid: uid-`+owner+`, controller: true}]
spec: {containers: [{name: app, image: nginx}]}
`)
	p.SetAnnotations(annotations)
	return p
}

func describe(rows []fleet.Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s profile=%s pods=%d behind=%d", r.Ref(), r.State, r.Profile, r.Pods, r.PodsBehind))
	}
	return strings.Join(out, "\n")
}

func manifestOf(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	data, err := sigsyaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
