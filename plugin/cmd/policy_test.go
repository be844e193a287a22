package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (examples/admission/policy.yaml, testdata/*.diff)")

// TestPolicyExample: kubectl inject policy prints, with no cluster, the
// policy examples/admission/policy.yaml holds (-update rewrites it).
func TestPolicyExample(t *testing.T) {
	const example = "../../examples/admission/policy.yaml"
	out, stderr, code := runCmd(t, "", "policy", "--kubeconfig", "/nonexistent")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkGoldenFile(t, example, out)
}

func TestPolicyJSON(t *testing.T) {
	out, stderr, code := runCmd(t, "", "policy", "-o", "json", "--native", "--mode", "opt-in", "--namespaces", "a,b")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	if list.Kind != "List" || len(list.Items) != 4 || list.Items[0].Kind != "MutatingAdmissionPolicy" {
		t.Errorf("-o json: %s", out)
	}
	if !strings.Contains(out, "initContainers/") || !strings.Contains(out, `x.?restartPolicy == optional.of(\"Always\")`) {
		t.Errorf("--native: the sidecar must go to the init containers, as a native sidecar\n%s", out)
	}
}

func TestPolicyFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"apply and delete", []string{"--apply", "--delete"}, "--apply and --delete cannot be combined"},
		{"output", []string{"-o", "name"}, `--output must be yaml or json, not "name"`},
		{"mode", []string{"--mode", "sometimes"}, `--mode: "sometimes" is not a mode (want opt-out or opt-in)`},
		{"force without apply", []string{"--force-conflicts"}, "--force-conflicts needs --apply"},
		{"kinds leave out Pods", []string{"--template", "testdata/deployments-only.yaml"}, "leaves out Pod"},
		{"arguments", []string{"deploy/web"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCmd(t, "", append([]string{"policy"}, tc.args...)...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q, want an error containing %q", code, stderr, tc.want)
			}
		})
	}
}

// TestPolicySelector: --selector chooses the Pods the policy injects; a
// configuration document's selector stands when the flag is not given,
// and the flag replaces it.
func TestPolicySelector(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	doc := filepath.Join(t.TempDir(), "inject.yaml")
	if err := os.WriteFile(doc, []byte("apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {selector: tier=db}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		want, not string
	}{
		{"the flag", []string{"--selector", "tier=web"}, "spec: {selector: tier=web}", "tier=db"},
		{"the document's", []string{"--template", doc}, "spec: {selector: tier=db}", "tier=web"},
		{"the flag over the document's", []string{"--template", doc, "--selector", "tier=web"}, "spec: {selector: tier=web}", "tier=db"},
		{"none", nil, "", "tier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, "", append([]string{"policy"}, tc.args...)...)
			if code != 0 || !strings.Contains(stdout, tc.want) || strings.Contains(stdout, tc.not) {
				t.Errorf("exit %d, stderr %s\nwant a policy with %q, without %q:\n%.600s", code, stderr, tc.want, tc.not, stdout)
			}
		})
	}
}

// TestPolicyDelete: --delete removes the bindings before the policies
// (the reverse of apply), reports one already gone, and goes on past one
// it cannot delete, failing at the end.
func TestPolicyDelete(t *testing.T) {
	t.Parallel()
	objs := policyObjects(t, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {}\n", "envoy")
	var stored []runtime.Object
	kinds := map[schema.GroupVersionResource]string{}
	for _, data := range objs[1:] { // the mutating policy is not there
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, u)
		kinds[policyResource(u.GetKind())] = u.GetKind() + "List"
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, stored...)
	client.PrependReactor("delete", "validatingadmissionpolicies", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server is on fire")
	})
	streams, _, _, errOut := genericiooptions.NewTestIOStreams()
	o := &PolicyOptions{IOStreams: streams}
	err := o.delete(context.Background(), client, objs)
	const group = "admissionregistration.k8s.io"
	want := "validatingadmissionpolicybinding." + group + "/kinject-envoy-conflicts deleted\n" +
		"mutatingadmissionpolicybinding." + group + "/kinject-envoy deleted\n" +
		"mutatingadmissionpolicy." + group + "/kinject-envoy not found\n"
	if errOut.String() != want || err == nil || err.Error() != "deleting validatingadmissionpolicy."+group+"/kinject-envoy-conflicts: the server is on fire" {
		t.Errorf("stderr:\n%s\nerror %v\nwant:\n%s", errOut.String(), err, want)
	}
}
