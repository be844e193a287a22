package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalDiff: --diff shows exactly the lines injection adds (golden
// testdata/app.diff), in the -u format patch(1) reads, changes nothing,
// and exits 1 as kubectl diff does when something would change; an
// unchanged input prints nothing and exits 0; uninject shows the removal.
func TestLocalDiff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.yaml")
	writeFile(t, path, app)
	out, stderr, code := runCmd(t, "", "--local", "-f", path, "--diff", "--color", "never")
	if code != 1 {
		t.Fatalf("--diff: exit %d, want 1 (something would change)\n%s", code, stderr)
	}
	if slurp(t, path) != app {
		t.Fatal("--diff changed the file")
	}
	got := strings.ReplaceAll(out, path, "app.yaml")
	golden := filepath.Join("testdata", "app.diff")
	checkGoldenFile(t, golden, got)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--- ") {
			t.Errorf("injection's diff removes a line: %q", line)
		}
	}
	injected, _, _ := runCmd(t, "", "--local", "-f", path)
	added := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++ ") {
			added++
		}
	}
	if want := strings.Count(injected, "\n") - strings.Count(app, "\n"); added != want {
		t.Errorf("--diff adds %d lines, injection adds %d", added, want)
	}

	done := filepath.Join(dir, "done.yaml")
	writeFile(t, done, injected)
	if out, _, code := runCmd(t, "", "--local", "-f", done, "--diff"); code != 0 || out != "" {
		t.Errorf("--diff of an injected file: exit %d, output %q", code, out)
	}
	out, _, code = runCmd(t, "", "--local", "-f", done, "--diff", "--uninject", "--color", "always")
	if code != 1 || !strings.Contains(out, "\x1b[31m-        - name: envoy") {
		t.Errorf("--diff --uninject --color always: exit %d\n%q", code, out)
	}
	// As kubectl diff: an error exits above 1, so that a script tells it
	// from "something would change".
	if _, stderr, code := runCmd(t, "", "--local", "-f", path, "--diff", "--in-place"); code != 2 || !strings.Contains(stderr, "--diff shows the change and makes none; it cannot be combined with --in-place") {
		t.Errorf("--diff --in-place: exit %d, want 2\n%s", code, stderr)
	}
	if _, stderr, code := runCmd(t, "", "--local", "-f", filepath.Join(dir, "none.yaml"), "--diff"); code != 2 || !strings.Contains(stderr, "none.yaml") {
		t.Errorf("--diff of a missing file: exit %d, want 2\n%s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, strings.Replace(app, "  template:\n    metadata:\n", "  template:\n    metadata:\n      annotations: {sidecar.kinject.dev/cpu-request: lots}\n", 1))
	if _, stderr, code := runCmd(t, "", "--local", "-f", bad, "--diff"); code != 2 || !strings.Contains(stderr, "sidecar.kinject.dev/cpu-request") {
		t.Errorf("--diff of an object that fails: exit %d, want 2\n%s", code, stderr)
	}
}
