package admission

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPolicyDiff: kubectl inject policy --apply --diff and --delete --diff
// show, per object, what the real --apply and --delete then do, store
// nothing, and exit as kubectl diff does (0 no change, 1 a change, 2 an
// error). The policy is bound to a namespace no other test uses.
func TestPolicyDiff(t *testing.T) {
	c.Require(t)
	base := []string{"policy", "--name", "difftest", "--namespaces", "kinject-diff-none", "--color", "never"}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return kubectlInject(t, append(append([]string{}, base...), args...)...)
	}
	const mapRef = "mutatingadmissionpolicy.admissionregistration.k8s.io/kinject-difftest"
	stored := func() (string, bool) {
		t.Helper()
		got, err := client(t).Resource(mutatingPolicies).Get(context.Background(), "kinject-difftest", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "", false
		}
		if err != nil {
			t.Fatal(err)
		}
		return got.GetResourceVersion(), true
	}

	// Not installed yet: the whole objects are added.
	out, errOut, code := run("--apply", "--diff")
	if code != 1 || !strings.Contains(out, "--- live/"+mapRef+"\n+++ applied/"+mapRef+"\n") || !strings.Contains(out, "\n+kind: MutatingAdmissionPolicy\n") {
		t.Fatalf("--apply --diff before install: exit %d\n%s%s", code, out, errOut)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--- ") {
			t.Errorf("diff of a new policy removes a line: %q", line)
		}
	}
	if strings.Count(out, "\n+++ applied/") != 4 {
		t.Errorf("want a diff for each of the four objects:\n%s", out)
	}
	if _, ok := stored(); ok {
		t.Fatal("--apply --diff stored the policy")
	}

	if out, errOut, code := run("--apply"); code != 0 {
		t.Fatalf("--apply: exit %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { run("--delete") })
	rv, _ := stored()

	if out, errOut, code := run("--apply", "--diff"); code != 0 || out != "" {
		t.Errorf("--apply --diff of the installed policy: exit %d, want 0 and no output\n%s%s", code, out, errOut)
	}

	// Another image: only the mutating policy's expression changes.
	out, errOut, code = run("--apply", "--diff", "--image", "envoyproxy/envoy:v1.37.0")
	if code != 1 || !strings.Contains(out, "+++ applied/"+mapRef+"\n") {
		t.Fatalf("--apply --diff --image: exit %d\n%s%s", code, out, errOut)
	}
	var removed, added bool
	for _, line := range strings.Split(out, "\n") {
		removed = removed || strings.HasPrefix(line, "-") && strings.Contains(line, "envoyproxy/envoy:v1.40.0")
		added = added || strings.HasPrefix(line, "+") && strings.Contains(line, "envoyproxy/envoy:v1.37.0")
	}
	if !removed || !added {
		t.Errorf("the image change is not in the diff:\n%s", out)
	}
	if now, _ := stored(); now != rv {
		t.Errorf("--apply --diff changed the stored policy (resourceVersion %s -> %s)", rv, now)
	}

	// --delete --diff: every line goes, nothing is deleted.
	out, errOut, code = run("--delete", "--diff")
	if code != 1 || !strings.Contains(out, "+++ deleted/"+mapRef+"\n") || strings.Count(out, "\n+++ deleted/") != 4 {
		t.Fatalf("--delete --diff: exit %d\n%s%s", code, out, errOut)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++ ") {
			t.Errorf("diff of a delete adds a line: %q", line)
		}
	}
	if _, ok := stored(); !ok {
		t.Fatal("--delete --diff deleted the policy")
	}

	// Errors exit 2, apart from a change.
	if _, errOut, code := run("--diff"); code != 2 || !strings.Contains(errOut, "--diff shows what --apply or --delete would change") {
		t.Errorf("--diff alone: exit %d, want 2\n%s", code, errOut)
	}
}
