package admission

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/internal/podgen"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// TestWarnings installs the default profile's policy and creates Pods the
// core refuses: each is stored as created, and the client gets the core's
// reason as a warning, naming both profiles for a clash between profiles
// and the annotation and its value for an override of the wrong type.
func TestWarnings(t *testing.T) {
	c.Require(t)
	ensureNamespace(t, "warn")
	probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: warn}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	configFile := writeFile(t, "config.yaml", []byte(defaultConfig))
	applyPolicy(t, configFile, probe)
	defer deletePolicy(t, configFile, probe)

	twin := injectorFor(t, twinConfig)
	plain := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: twin, namespace: warn}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	twinned, entry := coreInject(t, twin, plain)
	if entry.Action != inject.Injected {
		t.Fatalf("the twin profile did not inject: %s %s", entry.Action, entry.Message)
	}
	porter := injectorFor(t, `apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: porter}
spec:
  profile: porter
  template:
    containers: [{name: port-agent, image: busybox, ports: [{containerPort: 10000}]}]
`)
	ported, entry := coreInject(t, porter, bytes.Replace(plain, []byte("name: twin"), []byte("name: ported"), 1))
	if entry.Action != inject.Injected {
		t.Fatalf("the porter profile did not inject: %s %s", entry.Action, entry.Message)
	}
	bad := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: lots, namespace: warn, annotations: {sidecar.kinject.dev/cpu-request: lots}}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	unreadable := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: bad, namespace: warn, annotations: {mesh.sidecar.kinject.dev/status: '{\"v\":1}'}}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	appOn := func(name, port string) []byte {
		return []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: warn}\nspec:\n  containers: [{name: app, image: busybox, ports: [{containerPort: " + port + "}]}]\n")
	}
	overrideAdmin := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: override-admin, namespace: warn, annotations: {sidecar.kinject.dev/app-port: \"9901\"}}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	for _, tc := range []struct {
		name     string
		manifest []byte
		// core is in the core's message; want, when set, is the warning
		// (by default the core's message).
		core, want string
	}{
		{"a container of another profile", twinned, `container "envoy" (spec.initContainers) is added by profile "twin" and by the default profile`, ""},
		{"a port of another profile's sidecar", ported, `port 10000/TCP (spec.containers, sidecars "port-agent" and "envoy") is added by profile "porter" and by the default profile`, ""},
		// The sidecar's own ports: Envoy's admin API (reserved: declared by
		// no container), its proxy and its stats listeners.
		{"an app on the admin port", appOn("on-admin", "9901"), `sidecar "envoy" binds port 9901 (Envoy's admin API on 127.0.0.1), which container "app" already uses`, ""},
		{"an app on the proxy port", appOn("on-proxy", "10000"), `sidecar "envoy" port 10000 is already used by container "app"`, ""},
		{"an app on the stats port", appOn("on-stats", "9902"), `sidecar "envoy" port 9902 is already used by container "app"`, ""},
		{"an app port override on the admin port", overrideAdmin, `"9901" is a port of sidecar "envoy" (Envoy's admin API on 127.0.0.1), not the app's`, ""},
		{"an override of the wrong type", bad, `metadata.annotations["sidecar.kinject.dev/cpu-request"]: "lots" is not a resource quantity`, ""},
		// The policy cannot parse JSON: it names the record, not the error.
		{"an unreadable record of another profile", unreadable, "annotation mesh.sidecar.kinject.dev/status: status record has no template hash",
			"metadata.annotations: annotation mesh.sidecar.kinject.dev/status: not a valid status record (not as kubectl-inject writes it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The core refuses it too.
			_, e := coreInject(t, injectorFor(t, defaultConfig), tc.manifest)
			if e.Action != inject.Failed || !strings.Contains(e.Message, tc.core) {
				t.Fatalf("the core: %s %s", e.Action, e.Message)
			}
			if tc.want == "" {
				tc.want = e.Message
			}
			tc.want = "sidecar not injected by kinject-envoy: " + tc.want
			w, dc := warningClient(t)
			u := podFrom(t, tc.manifest)
			// The validating policy may start a moment after the mutating one.
			for deadline := time.Now().Add(60 * time.Second); !strings.Contains(w.all(), tc.want) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				_, _ = dc.Resource(pods).Namespace("warn").Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			}
			if !strings.Contains(w.all(), tc.want) {
				t.Fatalf("warnings %q do not contain %q", w.all(), tc.want)
			}
			got, err := createPod(t, tc.manifest, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, injected := annotation(got, naming.StatusAnnotation); injected {
				t.Errorf("the Pod was injected: %s", toJSON(got))
			}
		})
	}
}

// TestExpressionError: a template's expression that fails on a Pod (a field
// read without a has() guard) fails the object in the core, and at admission
// leaves the Pod as created, with a warning that the policy failed on it:
// the mutating policy ignores its errors and leaves no mark, which the
// validating one reports. kubectl inject explain names the error.
func TestExpressionError(t *testing.T) {
	c.Require(t)
	ensureNamespace(t, "experr")
	template := podgen.ExpressionErrorTemplate
	// The probe has a port, so the expression works and the policy injects.
	probe := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: experr}\nspec:\n  containers: [{name: app, image: busybox, ports: [{containerPort: 8080}]}]\n")
	templateFile := writeFile(t, "template.yaml", []byte(template))
	applyPolicy(t, templateFile, probe)
	defer deletePolicy(t, templateFile, probe)

	portless := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: portless, namespace: experr}\nspec:\n  containers: [{name: app, image: busybox}]\n")
	_, e := coreInject(t, injectorFor(t, template), portless)
	if e.Action != inject.Failed || !strings.Contains(e.Message, "containers[agent].env[PORT].value: expression: no such key: ports") {
		t.Fatalf("the core: %s %s", e.Action, e.Message)
	}

	w, dc := warningClient(t)
	// The validating policy may start a moment after the mutating one: dry
	// runs until its warning comes (none comes while it ignores errors).
	u := podFrom(t, portless)
	const failed = "sidecar not injected by kinject-envoy: the policy left no reason on the Pod: it failed on it (kubectl inject explain names the error)"
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(w.all(), failed) && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := dc.Resource(pods).Namespace("experr").Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("the Pod was refused: %v", err)
		}
	}
	got, err := dc.Resource(pods).Namespace("experr").Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the Pod was refused: %v", err)
	}
	t.Cleanup(func() {
		_ = dc.Resource(pods).Namespace("experr").Delete(context.Background(), "portless", metav1.DeleteOptions{})
	})
	if _, injected := annotation(got.Object, statusKeyOf(t, templateFile)); injected {
		t.Errorf("the Pod was injected: %s", toJSON(got.Object))
	}
	if containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "containers"); len(containers) != 1 {
		t.Errorf("the Pod has %d containers, want its own 1", len(containers))
	}
	if !strings.Contains(w.all(), failed) {
		t.Errorf("no warning says that the policy failed: %q", w.all())
	}
	out, errOut, code := kubectlInject(t, "explain", "pod/portless", "-n", "experr")
	if code != 1 || !strings.Contains(out, "the policy fails on this Pod") || !strings.Contains(out, "ports") {
		t.Errorf("kubectl inject explain pod/portless: exit %d, want 1 and the error naming ports:\n%s%s", code, out, errOut)
	}
}
