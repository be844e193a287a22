package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestCurrentIsTheInstalledPolicy: status, restart and check read
// "current" from the profile's installed policy, with the template flags
// over it; an edited configuration is refused by restart and warned of by
// status; a policy of an older version without its configuration counts
// as the default only when its template hash is the default's.
func TestCurrentIsTheInstalledPolicy(t *testing.T) {
	c.Require(t)
	const profile, policy = "cur", "kinject-envoy-cur"
	hash := func(image string) string {
		in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Profile: profile, Image: image})
		if err != nil {
			t.Fatal(err)
		}
		return in.TemplateHash()
	}
	def, b, cImage := hash(""), hash("registry.example/envoy:b"), hash("registry.example/envoy:c")
	run := func(args ...string) (string, string, int) {
		out, errOut, code := kubectlInject(t, append(args, "--profile", profile)...)
		t.Logf("kubectl inject %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		return out, errOut, code
	}
	firstLine := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	expectCurrent := func(what, stderr, want string) {
		t.Helper()
		if got := firstLine(stderr); got != want {
			t.Errorf("%s: first line %q, want %q", what, got, want)
		}
	}

	_, errOut, code := run("status", "-n", "default")
	expectCurrent("nothing installed", errOut, `current: template `+def+` of profile "cur" (the embedded default)`)
	if code != 0 {
		t.Errorf("status: exit %d", code)
	}

	if _, _, code := run("policy", "--apply", "--image", "registry.example/envoy:b"); code != 0 {
		t.Fatalf("policy --apply: exit %d", code)
	}
	t.Cleanup(func() { run("policy", "--delete") })
	installed := `current: template ` + b + ` of profile "cur" (mutatingadmissionpolicy/` + policy + `)`
	_, errOut, _ = run("status", "-n", "default")
	expectCurrent("status", errOut, installed)
	_, errOut, code = run("restart", "-n", "default", "--dry-run")
	expectCurrent("restart", errOut, installed)
	if code != 0 {
		t.Errorf("restart --dry-run: exit %d", code)
	}
	_, errOut, _ = run("status", "-n", "default", "--image", "registry.example/envoy:c")
	expectCurrent("status --image", errOut, `current: template `+cImage+` of profile "cur" (mutatingadmissionpolicy/`+policy+`)`)
	out, _, _ := run("check")
	if want := "  [ok]   " + policy + " (profile cur) is installed and current (template " + b + ")"; !strings.Contains(out, want+"\n") {
		t.Errorf("check without flags: no line %q", want)
	}
	out, _, _ = run("check", "--image", "registry.example/envoy:c")
	if want := "  [FAIL] " + policy + " injects an older template (" + b + "; current " + cImage + "): new Pods get the old sidecar"; !strings.Contains(out, want+"\n") {
		t.Errorf("check --image: no line %q", want)
	}

	// Edited by hand: restart refuses, status warns and takes the default.
	annotate := func(annotations map[string]any) {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if _, err := client(t).Resource(mutatingPolicies).Patch(context.Background(), policy, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := client(t).Resource(mutatingPolicies).Get(context.Background(), policy, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config := stored.GetAnnotations()[admission.ConfigAnnotation]
	annotate(map[string]any{admission.ConfigAnnotation: strings.Replace(config, "registry.example/envoy:b", "registry.example/envoy:x", 1)})
	_, errOut, code = run("restart", "-n", "default", "--dry-run")
	if code != 1 || !strings.Contains(errOut, `mutatingadmissionpolicy/`+policy+`: metadata.annotations["sidecar.kinject.dev/config"] gives template `) ||
		!strings.Contains(errOut, "give --template to say what current is") {
		t.Errorf("restart with an edited configuration: exit %d\n%s", code, errOut)
	}
	_, errOut, code = run("status", "-n", "default")
	if code != 0 || !strings.HasPrefix(errOut, "Warning: mutatingadmissionpolicy/"+policy+": ") ||
		!strings.Contains(errOut, "; current is the embedded default\ncurrent: template "+def+` of profile "cur" (the embedded default)`) {
		t.Errorf("status with an edited configuration: exit %d\n%s", code, errOut)
	}

	// Installed by a version that carried no configuration.
	annotate(map[string]any{admission.ConfigAnnotation: nil, admission.TemplateHashAnnotation: def})
	_, errOut, code = run("restart", "-n", "default", "--dry-run")
	expectCurrent("no configuration, the default's hash", errOut, `current: template `+def+` of profile "cur" (mutatingadmissionpolicy/`+policy+`)`)
	if code != 0 {
		t.Errorf("restart, no configuration, the default's hash: exit %d", code)
	}
	annotate(map[string]any{admission.TemplateHashAnnotation: b})
	_, errOut, code = run("restart", "-n", "default", "--dry-run")
	if code != 1 || !strings.Contains(errOut, "mutatingadmissionpolicy/"+policy+" injects template "+b+" but does not say which") {
		t.Errorf("restart, no configuration, another hash: exit %d\n%s", code, errOut)
	}
}
