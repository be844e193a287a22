package static

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// reloads is the API server's count of reloads of the static mutating
// policies with status (success, failure).
func reloads(t testing.TB, status string) int {
	t.Helper()
	const name = "apiserver_manifest_admission_config_controller_automatic_reloads_total{"
	for _, line := range strings.Split(metricsText(t), "\n") {
		if strings.HasPrefix(line, name) && strings.Contains(line, `plugin="MutatingAdmissionPolicy"`) && strings.Contains(line, `status="`+status+`"`) {
			n, err := strconv.Atoi(line[strings.LastIndex(line, " ")+1:])
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// served is the hash of the static mutating manifests the API server
// runs, as its metrics report it.
func served(t testing.TB) string {
	t.Helper()
	const name = "apiserver_manifest_admission_config_controller_last_config_info{"
	for _, line := range strings.Split(metricsText(t), "\n") {
		if strings.HasPrefix(line, name) && strings.Contains(line, `plugin="MutatingAdmissionPolicy"`) {
			// hash, not apiserver_id_hash
			i := strings.Index(line, `,hash="`)
			if i >= 0 {
				rest := line[i+len(`,hash="`):]
				return rest[:strings.Index(rest, `"`)]
			}
		}
	}
	return ""
}

func metricsText(t testing.TB) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.AdminConfig())
	if err != nil {
		t.Fatal(err)
	}
	data, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeStatic(t testing.TB, args ...string) {
	t.Helper()
	if _, stderr, code := kubectlInject(t, append([]string{"policy", "--static", staticDir}, args...)...); code != 0 {
		t.Fatalf("policy --static %v: exit %d: %s", args, code, stderr)
	}
}

// TestStaticReload changes the files on disk: the API server picks up a
// new image (the delay is measured), keeps the last good policy when a
// file is broken (and counts the failed reload), and takes the policy
// back when the files are written again.
func TestStaticReload(t *testing.T) {
	setup(t)
	defaultImage := sidecarImageOf(t)
	waitInjecting(t, staticNS, defaultImage)
	t.Cleanup(func() {
		writeStatic(t)
		waitInjecting(t, staticNS, defaultImage)
	})

	const newImage = "envoyproxy/envoy:v1.99.0"
	writeStatic(t, "--image", newImage)
	delay := waitInjecting(t, staticNS, newImage)
	t.Logf("a new image in the static files injected %v after they were written", delay.Round(time.Millisecond))

	// A hand edit that breaks the CEL: the API server refuses the reload
	// and keeps injecting the last good set.
	failures := reloads(t, "failure")
	file := filepath.Join(staticDir, "mutating", "kinject-envoy.policy.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), "  variables:\n  - expression: ", "  variables:\n  - expression: 1 +* ", 1)
	if broken == string(data) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for reloads(t, "failure") == failures {
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("no failed reload counted %v after a broken file", time.Since(start))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the broken file refused %v after it was written", time.Since(start).Round(time.Millisecond))
	if got, err := createPod(context.Background(), t, staticNS, simplePod("after-broken-"+strconv.FormatInt(time.Now().UnixNano(), 36))); err != nil || sidecarImage(got) != newImage {
		t.Errorf("after a broken reload: %v, image %q; want the last good policy's %s", err, sidecarImage(got), newImage)
	}
	// policy --static --check sees the hand edit.
	if out, _, code := kubectlInject(t, "policy", "--static", staticDir, "--check", "--image", newImage); code != 1 || !strings.Contains(out, "1 +* ") {
		t.Errorf("--check after a hand edit: exit %d, want 1 and the edit in the diff", code)
	}
}

// sidecarImageOf is the image the static policy injects now.
func sidecarImageOf(t testing.TB) string {
	t.Helper()
	got, err := createPod(context.Background(), t, staticNS, simplePod("image-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil || sidecarImage(got) == "" {
		t.Fatalf("a Pod of %s: %v, no sidecar", staticNS, err)
	}
	return sidecarImage(got)
}

var mutatingPolicies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"}

// TestStaticNotRemovable: no client can delete, replace or shadow the
// static policy through the API, and Pods keep being injected.
func TestStaticNotRemovable(t *testing.T) {
	setup(t)
	ctx := context.Background()
	dc := client(t)
	err := dc.Resource(mutatingPolicies).Delete(ctx, "kinject-envoy.static.k8s.io", metav1.DeleteOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("delete through the API: %v, want NotFound (the API does not hold static objects)", err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy",
		"metadata": map[string]any{"name": "kinject-envoy.static.k8s.io"},
		"spec": map[string]any{
			"failurePolicy": "Ignore", "reinvocationPolicy": "Never",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"pods"}}}},
			"mutations":        []any{map[string]any{"patchType": "JSONPatch", "jsonPatch": map[string]any{"expression": "[]"}}},
		},
	}}
	_, err = dc.Resource(mutatingPolicies).Create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "reserved for static manifest-based configurations") {
		t.Errorf("create a policy of the same name through the API: %v, want Invalid (the suffix is reserved)", err)
	}
	if _, stderr, code := kubectlInject(t, "policy", "--delete"); code != 0 {
		t.Errorf("policy --delete: exit %d: %s", code, stderr)
	}
	got, err := createPod(ctx, t, staticNS, simplePod("after-delete"))
	if err != nil || injected(got) != "injected" {
		t.Errorf("after deleting through the API: %v, %q; want the Pod injected", err, injected(got))
	}
}

// TestStaticSelection: as the policy installed through the API, the
// static policy leaves alone a namespace not enabled and a system
// namespace even when labelled; a Pod that opts out is skipped with its
// reason.
func TestStaticSelection(t *testing.T) {
	setup(t)
	ctx := context.Background()
	if got, err := createPod(ctx, t, plainNS, simplePod("not-enabled")); err != nil || injected(got) != "" {
		t.Errorf("a namespace not enabled: %v, %q; want the Pod as created", err, injected(got))
	}
	patch := []byte(`{"metadata":{"labels":{"sidecar.kinject.dev/inject":"enabled"}}}`)
	if _, err := client(t).Resource(namespaces).Patch(ctx, "kube-system", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := createPod(ctx, t, "kube-system", simplePod("system")); err != nil || injected(got) != "" {
		t.Errorf("kube-system labelled enabled: %v, %q; want the Pod as created", err, injected(got))
	}
	p := simplePod("opted-out")
	p.SetAnnotations(map[string]string{"sidecar.kinject.dev/inject": "false"})
	got, err := createPod(ctx, t, staticNS, p)
	if err != nil || got.GetAnnotations()["sidecar.kinject.dev/skipped"] != "opted_out" {
		t.Errorf("an opted-out Pod: %v, annotations %v; want skipped: opted_out", err, got.GetAnnotations())
	}
}
