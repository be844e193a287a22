package rollout

import (
	"encoding/json"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/record"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

const appPod = `{apiVersion: v1, kind: Pod, metadata: {name: web-0, namespace: shop, labels: {app: web}},
  spec: {containers: [{name: app, image: app:1, ports: [{containerPort: 8080}]}]}}`

// injector is the default template with image, native or classic.
func injector(t *testing.T, image string, native bool) *inject.Injector {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Image: image, Native: &native})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// injectedPod is appPod injected by in, with what the API server fills
// in on every container (as a Pod read from the cluster has it), and
// edit applied.
func injectedPod(t *testing.T, in *inject.Injector, edit func(map[string]any)) *unstructured.Unstructured {
	t.Helper()
	node, err := yaml.Parse(appPod)
	if err != nil {
		t.Fatal(err)
	}
	if e := in.ProcessNode(inject.OpInject, node, 0); len(e) != 1 || e[0].Action != inject.Injected {
		t.Fatalf("injecting: %+v", e)
	}
	data, err := node.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	for _, field := range []string{"containers", "initContainers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			c := c.(map[string]any)
			c["terminationMessagePath"], c["terminationMessagePolicy"], c["imagePullPolicy"] = "/dev/termination-log", "File", "IfNotPresent"
			for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
				if p, ok := c[probe].(map[string]any); ok {
					p["timeoutSeconds"], p["successThreshold"] = int64(1), int64(1)
				}
			}
		}
	}
	spec["restartPolicy"], spec["dnsPolicy"] = "Always", "ClusterFirst"
	// the service account token, mounted in every container
	token := map[string]any{"name": "kube-api-access-x1", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}
	spec["volumes"] = append(asList(spec["volumes"]), map[string]any{"name": "kube-api-access-x1", "projected": map[string]any{"sources": []any{}}})
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range asList(spec[field]) {
			c := c.(map[string]any)
			c["volumeMounts"] = append(asList(c["volumeMounts"]), token)
		}
	}
	// in its canonical form, as the API server writes it (1000m is 1)
	if c, ok := spec["initContainers"].([]any); ok {
		limits := c[0].(map[string]any)["resources"].(map[string]any)["limits"].(map[string]any)
		if limits["cpu"] == "1000m" {
			limits["cpu"] = "1"
		}
	}
	if edit != nil {
		edit(obj)
	}
	return &unstructured.Unstructured{Object: obj}
}

// TestDecideUpgrade: a Pod whose sidecar differs from the current
// template by its image alone is upgraded in place; any other difference,
// a Pod already current and a Pod without a sidecar are recreated.
func TestDecideUpgrade(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		pod        func(t *testing.T) *unstructured.Unstructured
		current    func(t *testing.T) *inject.Injector
		wantReason reason.Code
		wantImages []ImageChange
	}{
		{"image only, native sidecar", func(t *testing.T) *unstructured.Unstructured {
			return injectedPod(t, injector(t, "envoy:a", true), nil)
		},
			func(t *testing.T) *inject.Injector { return injector(t, "envoy:b", true) },
			"", []ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}}},
		{"image only, classic sidecar", func(t *testing.T) *unstructured.Unstructured {
			return injectedPod(t, injector(t, "envoy:a", false), nil)
		},
			func(t *testing.T) *inject.Injector { return injector(t, "envoy:b", false) },
			"", []ImageChange{{Container: "envoy", From: "envoy:a", To: "envoy:b"}}},
		{"native to classic", func(t *testing.T) *unstructured.Unstructured {
			return injectedPod(t, injector(t, "envoy:a", true), nil)
		},
			func(t *testing.T) *inject.Injector { return injector(t, "envoy:b", false) },
			ReasonNotImageOnly, nil},
		{"a field of the sidecar the template no longer has", func(t *testing.T) *unstructured.Unstructured {
			return injectedPod(t, injector(t, "envoy:a", true), func(obj map[string]any) {
				c := obj["spec"].(map[string]any)["initContainers"].([]any)[0].(map[string]any)
				c["workingDir"] = "/tmp"
			})
		}, func(t *testing.T) *inject.Injector { return injector(t, "envoy:b", true) }, ReasonNotImageOnly, nil},
		{"already current", func(t *testing.T) *unstructured.Unstructured {
			return injectedPod(t, injector(t, "envoy:a", true), nil)
		},
			func(t *testing.T) *inject.Injector { return injector(t, "envoy:a", true) }, ReasonAlreadyCurrent, nil},
		{"not injected", func(t *testing.T) *unstructured.Unstructured { return object(t, appPod) },
			func(t *testing.T) *inject.Injector { return injector(t, "envoy:b", true) }, inject.ReasonNotInjected, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := DecideUpgrade(tc.current(t), tc.pod(t))
			if u.Reason != tc.wantReason {
				t.Fatalf("reason %q (%s), want %q", u.Reason, u.Message, tc.wantReason)
			}
			if len(u.Images) != len(tc.wantImages) && tc.wantReason == "" {
				t.Fatalf("images %+v, want %+v", u.Images, tc.wantImages)
			}
			for i := range tc.wantImages {
				if u.Images[i] != tc.wantImages[i] {
					t.Errorf("image %d: %+v, want %+v", i, u.Images[i], tc.wantImages[i])
				}
			}
		})
	}
}

// TestUpgradePatch: the upgrade is one strategic merge patch of the
// images, the record, the marker and the labels, guarded by the
// resourceVersion; the rollback patch restores each and drops the marker.
func TestUpgradePatch(t *testing.T) {
	t.Parallel()
	u := Upgrade{Pod: "web-0", RecordKey: "sidecar.kinject.dev/status", Record: "new", OldRecord: "old",
		MarkerKey: "sidecar.kinject.dev/upgraded-in-place", FromTemplate: "h1",
		Images:    []ImageChange{{Container: "envoy", Init: true, From: "envoy:a", To: "envoy:b"}, {Container: "agent", From: "agent:1", To: "agent:2"}},
		Labels:    map[string]string{"controller-revision-hash": "db-2"},
		OldLabels: map[string]string{"controller-revision-hash": "db-1"}}
	for _, tc := range []struct {
		name  string
		patch func() ([]byte, error)
		want  string
	}{
		{"upgrade", func() ([]byte, error) { return u.Patch("42") }, `{"metadata":{"annotations":{"sidecar.kinject.dev/status":"new","sidecar.kinject.dev/upgraded-in-place":"h1"},"labels":{"controller-revision-hash":"db-2"},"resourceVersion":"42"},"spec":{"containers":[{"image":"agent:2","name":"agent"}],"initContainers":[{"image":"envoy:b","name":"envoy"}]}}`},
		{"rollback", u.RollbackPatch, `{"metadata":{"annotations":{"sidecar.kinject.dev/status":"old","sidecar.kinject.dev/upgraded-in-place":null},"labels":{"controller-revision-hash":"db-1"}},"spec":{"containers":[{"image":"agent:1","name":"agent"}],"initContainers":[{"image":"envoy:a","name":"envoy"}]}}`},
		// a record alone (a resize): no labels, no spec, no resourceVersion
		{"record alone", func() ([]byte, error) {
			return Upgrade{Pod: "web-0", RecordKey: "r", Record: "new", MarkerKey: "m", FromTemplate: "h1"}.Patch("")
		}, `{"metadata":{"annotations":{"m":"h1","r":"new"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.patch()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	t.Run("recreated Pod", func(t *testing.T) {
		t.Parallel()
		if _, err := (Upgrade{Pod: "web-0", Reason: ReasonNotImageOnly}).Patch(""); err == nil {
			t.Error("a Pod to recreate got a patch")
		}
	})
}

// TestUpgradeRecord: the record an upgrade in place writes is the Pod's,
// with the current template's hash and values: what the first injection
// created (metadata.annotations on a Pod that had none) stays recorded,
// though an annotation added since would keep the map on its own.
func TestUpgradeRecord(t *testing.T) {
	t.Parallel()
	current := injector(t, "envoy:b", true)
	pod := injectedPod(t, injector(t, "envoy:a", true), func(obj map[string]any) {
		obj["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/added"] = "later"
	})
	u := DecideUpgrade(current, pod)
	if !u.InPlace() {
		t.Fatalf("%s: %s", u.Reason, u.Message)
	}
	old, err := record.Parse(naming.StatusAnnotation, u.OldRecord)
	if err != nil {
		t.Fatal(err)
	}
	got, err := record.Parse(naming.StatusAnnotation, u.Record)
	if err != nil {
		t.Fatal(err)
	}
	if got.Template != current.TemplateHash() || u.FromTemplate != old.Template {
		t.Errorf("template %s (from %s), want %s (from %s)", got.Template, u.FromTemplate, current.TemplateHash(), old.Template)
	}
	old.Template = got.Template
	if got.Encode() != old.Encode() {
		t.Errorf("record\n%s\nwant the Pod's with the new template\n%s", got.Encode(), old.Encode())
	}
}
