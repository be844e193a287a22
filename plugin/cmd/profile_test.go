package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// logAgent is a second sidecar that shares nothing with the default one,
// so both profiles fit in one pod template.
const logAgent = `containers:
- name: log-agent
  image: fluent/fluent-bit:3.0
  volumeMounts:
  - {name: logs, mountPath: /var/log/app}
volumes:
- name: logs
  emptyDir: {}
`

// profileFiles writes the app, the log agent template and the app with
// the default sidecar injected, and returns their paths.
func profileFiles(t *testing.T) (appFile, logsTemplate, withDefault string) {
	t.Helper()
	dir := t.TempDir()
	appFile = filepath.Join(dir, "app.yaml")
	writeFile(t, appFile, app)
	logsTemplate = filepath.Join(dir, "log-agent.yaml")
	writeFile(t, logsTemplate, logAgent)
	out, stderr, code := runCmd(t, "", "--local", "-f", appFile)
	if code != 0 {
		t.Fatalf("inject the default profile: exit %d: %s", code, stderr)
	}
	withDefault = filepath.Join(dir, "default.yaml")
	writeFile(t, withDefault, out)
	return appFile, logsTemplate, withDefault
}

// TestLocalProfiles: two profiles through --local. Each one is injected
// and removed on its own: removing one gives, byte for byte, what
// injecting only the other gives; --all-profiles gives the input back;
// injecting a profile again changes nothing.
func TestLocalProfiles(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	appFile, logs, withDefault := profileFiles(t)
	both, stderr, code := runCmd(t, "", "--local", "-f", withDefault, "--profile", "logs", "--template", logs)
	if code != 0 || !strings.Contains(both, "logs.sidecar.kinject.dev/status:") || !strings.Contains(both, "- name: log-agent") || !strings.Contains(both, "- name: envoy") {
		t.Fatalf("inject --profile logs over the default profile: exit %d, %s\n%s", code, stderr, both)
	}
	bothFile := filepath.Join(t.TempDir(), "both.yaml")
	writeFile(t, bothFile, both)
	onlyLogs, _, _ := runCmd(t, "", "--local", "-f", appFile, "--profile", "logs", "--template", logs)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"uninject the default profile", []string{"--uninject"}, onlyLogs},
		{"uninject the logs profile", []string{"--uninject", "--profile", "logs"}, slurp(t, withDefault)},
		{"uninject all profiles", []string{"--uninject", "--all-profiles"}, app},
		{"inject the logs profile again", []string{"--profile", "logs", "--template", logs}, both},
		{"inject the default profile again", nil, both},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr, code := runCmd(t, "", append([]string{"--local", "-f", bothFile}, tc.args...)...)
			if code != 0 || got != tc.want {
				t.Errorf("exit %d, %s\n--- got:\n%s\n--- want:\n%s", code, stderr, got, tc.want)
			}
		})
	}
	t.Run("two profiles adding the same container", func(t *testing.T) {
		out, stderr, code := runCmd(t, "", "--local", "-f", withDefault, "--profile", "mesh")
		want := `deployment.apps/web error: conflict: container "envoy" (spec.template.spec.initContainers) is added by the default profile and by profile "mesh"`
		if code != 1 || out != slurp(t, withDefault) || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1, the input unchanged and %q", code, stderr, want)
		}
	})
	t.Run("check reads the profile's record", func(t *testing.T) {
		if _, stderr, code := runCmd(t, "", "--local", "-f", withDefault, "--check", "--profile", "logs", "--template", logs); code != 1 || !strings.Contains(stderr, "deployment.apps/web would be injected") {
			t.Errorf("the default profile's record made the logs profile current: exit %d\n%s", code, stderr)
		}
		if _, stderr, code := runCmd(t, "", "--local", "-f", bothFile, "--check", "--profile", "logs", "--template", logs); code != 0 {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	})
}

// TestLocalProfileDiff: --diff with a profile shows only that profile's
// lines: injecting the log agent over the default sidecar adds its lines
// and touches none of the default profile's; uninjecting it removes them
// again (golden testdata/profile-logs.diff).
func TestLocalProfileDiff(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	_, logs, withDefault := profileFiles(t)
	out, stderr, code := runCmd(t, "", "--local", "-f", withDefault, "--diff", "--color", "never", "--profile", "logs", "--template", logs)
	if code != 1 {
		t.Fatalf("--diff: exit %d, want 1\n%s", code, stderr)
	}
	got := strings.ReplaceAll(out, withDefault, "default.yaml")
	golden := filepath.Join("testdata", "profile-logs.diff")
	checkGoldenFile(t, golden, got)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--- ") {
			t.Errorf("injecting a second profile removes a line: %q", line)
		}
		if strings.HasPrefix(line, "+") && (strings.Contains(line, "envoy") || strings.Contains(line, "sidecar.kinject.dev/status") && !strings.Contains(line, "logs.sidecar")) {
			t.Errorf("injecting the logs profile adds a line of the default profile: %q", line)
		}
	}

	both, _, _ := runCmd(t, "", "--local", "-f", withDefault, "--profile", "logs", "--template", logs)
	bothFile := filepath.Join(t.TempDir(), "both.yaml")
	writeFile(t, bothFile, both)
	out, _, code = runCmd(t, "", "--local", "-f", bothFile, "--diff", "--color", "never", "--uninject", "--profile", "logs")
	removed := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++ "):
			t.Errorf("uninjecting one profile adds a line: %q", line)
		case strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "--- "):
			removed++
			if strings.Contains(line, "envoy") {
				t.Errorf("uninjecting the logs profile removes a line of the default profile: %q", line)
			}
		}
	}
	if added := strings.Count(got, "\n+") - 1; code != 1 || removed != added {
		t.Errorf("--diff --uninject --profile logs: exit %d, removes %d lines, injecting added %d\n%s", code, removed, added, out)
	}
}

// TestLocalProfilePolicy: --profile reaches the policy compiler, whose
// objects and record are the profile's.
func TestLocalProfilePolicy(t *testing.T) {
	_, logs, _ := profileFiles(t)
	out, stderr, code := runCmd(t, "", "policy", "--kubeconfig", "/nonexistent", "--profile", "logs", "--template", logs)
	if code != 0 || !strings.Contains(out, "name: kinject-envoy-logs\n") || !strings.Contains(out, "logs.sidecar.kinject.dev~1status") {
		t.Errorf("exit %d, %s\n%s", code, stderr, out)
	}
}
