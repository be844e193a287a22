package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policy --static writes the four objects, one per file, prints the
// AdmissionConfiguration, and --check tells a current directory (exit
// 0) from a stale one (exit 1, a diff) and from an error (exit 2).
func TestPolicyStatic(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := runCmd(t, "", "policy", "--static", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"mutating/kinject-envoy.policy.yaml", "mutating/kinject-envoy.binding.yaml",
		"validating/kinject-envoy-conflicts.policy.yaml", "validating/kinject-envoy-conflicts.binding.yaml"} {
		if !strings.Contains(stderr, filepath.Join(dir, f)+" written\n") {
			t.Errorf("stderr does not say %s was written:\n%s", f, stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(data), ".static.k8s.io\n") {
			t.Errorf("%s: %v, or no static name", f, err)
		}
	}
	if !strings.Contains(out, "staticManifestsDir: "+filepath.Join(dir, "mutating")+"\n") || !strings.Contains(out, "staticManifestsDir: "+filepath.Join(dir, "validating")+"\n") {
		t.Errorf("the configuration does not name both directories:\n%s", out)
	}
	if strings.Contains(stderr, "nothing written") {
		t.Errorf("the first run says nothing was written:\n%s", stderr)
	}
	// Written again, the same: nothing changes, and it says so.
	if _, stderr, code = runCmd(t, "", "policy", "--static", dir); code != 0 || strings.Contains(stderr, ".yaml written\n") ||
		!strings.Contains(stderr, dir+": the static policy kinject-envoy.static.k8s.io is current (4 files); nothing written\n") {
		t.Errorf("written again: exit %d: %s", code, stderr)
	}
	if _, stderr, code = runCmd(t, "", "policy", "--static", dir, "--check"); code != 0 || !strings.Contains(stderr, "is current (4 files)") {
		t.Errorf("--check of what was written: exit %d: %s", code, stderr)
	}
	out, _, code = runCmd(t, "", "policy", "--static", dir, "--check", "--image", "envoyproxy/envoy:v1.99.0")
	if code != 1 || !strings.Contains(out, "+        \"image\": dyn(string(object.metadata.?annotations[?\"sidecar.kinject.dev/image\"].orValue(\"envoyproxy/envoy:v1.99.0\")))") {
		t.Errorf("--check with another image: exit %d, want 1 and the image's line in the diff:\n%s", code, out)
	}
	// Still the first set: --check wrote nothing.
	if _, _, code = runCmd(t, "", "policy", "--static", dir, "--check"); code != 0 {
		t.Errorf("--check changed the directory")
	}
	_, stderr, code = runCmd(t, "", "policy", "--static", dir, "--check", "--template", "testdata/deployments-only.yaml")
	if code != 2 || !strings.Contains(stderr, "leaves out Pod") {
		t.Errorf("--check of a template with no policy: exit %d, want 2: %s", code, stderr)
	}
}

func TestPolicyStaticFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--check"}, "--check compares a directory of static manifests: give it with --static DIR"},
		{[]string{"--static", "x", "--apply"}, "--static writes files for the API server to load; it cannot be combined with --apply, --delete, --diff or --output"},
		{[]string{"--static", "x", "-o", "json"}, "cannot be combined with --apply, --delete, --diff or --output"},
	} {
		_, stderr, code := runCmd(t, "", append([]string{"policy"}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
}
