package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// semver is what krew and OCI version labels expect.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// TestMakeImage runs `make image` as a user does: the image's version and
// revision labels are the version and commit the binaries of the same
// build report, and an untagged build says so in all of them.
func TestMakeImage(t *testing.T) {
	docker := need(t, "docker")
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := t.TempDir()
	const tag = "kinject/inject-fn:e2e-make-image"
	r := run(t, repoRoot, "make", "-s", "image", "BIN="+bin, "IMAGES="+tag)
	if r.code != 0 {
		t.Fatalf("make image: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() { _ = exec.Command(docker, "rmi", tag).Run() })
	var labels map[string]string
	if err := json.Unmarshal([]byte(mustRun(t, "", docker, "image", "inspect", "-f", "{{json .Config.Labels}}", tag)), &labels); err != nil {
		t.Fatal(err)
	}
	version, revision := labels["org.opencontainers.image.version"], labels["org.opencontainers.image.revision"]
	if !semver.MatchString(version) || revision == "" || revision == "unknown" {
		t.Fatalf("labels version %q, revision %q: want a semantic version and the commit", version, revision)
	}
	if strings.Contains(version, "-dev") && !strings.Contains(version, "+"+revision) {
		t.Errorf("an untagged build's version %q does not name its commit %s", version, revision)
	}
	want := version
	if !strings.Contains(version, "+"+revision) {
		want += " (" + revision + ")"
	}
	for _, b := range []struct{ name, binary string }{
		{"inject-fn", "inject-fn"}, {"kubectl-inject", "kubectl-inject"}, {"kubectl-inject", "kinject-live"}, {"kinject-cel", "kinject-cel"},
	} {
		got := strings.TrimSpace(mustRun(t, "", filepath.Join(bin, b.binary), "--version"))
		if got != b.name+" "+want {
			t.Errorf("%s --version: %q, want %q (the image's labels)", b.binary, got, b.name+" "+want)
		}
	}
	got := strings.TrimSpace(mustRun(t, "", docker, "run", "--rm", "--network", "none", tag, "--version"))
	if got != "inject-fn "+want {
		t.Errorf("the image's inject-fn --version: %q, want %q", got, "inject-fn "+want)
	}
}
