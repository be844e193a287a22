package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// withAnnotation returns app with an override annotation on the
// Deployment.
func withAnnotation(key, value string) string {
	return strings.Replace(app, "  name: web # keep me\n", "  name: web # keep me\n  annotations:\n    "+key+": "+value+"\n", 1)
}

// TestLocalOverrides: an override annotation sets the sidecar's value and
// is recorded; once it changes, --check reports the object as not current,
// and injecting again changes exactly the sidecar's value and the record.
func TestLocalOverrides(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	dir := t.TempDir()
	src := filepath.Join(dir, "app.yaml")
	writeFile(t, src, withAnnotation("sidecar.kinject.dev/cpu-request", "250m"))
	injected, stderr, code := runCmd(t, "", "--local", "-f", src)
	if code != 0 || !strings.Contains(injected, "            cpu: 250m\n") || !strings.Contains(injected, `"values":{"cpu-request":"250m"}`) {
		t.Fatalf("exit %d, %s\n%s", code, stderr, injected)
	}
	changed := filepath.Join(dir, "changed.yaml")
	writeFile(t, changed, strings.Replace(injected, "sidecar.kinject.dev/cpu-request: 250m", "sidecar.kinject.dev/cpu-request: 500m", 1))

	if _, stderr, code := runCmd(t, "", "--local", "-f", changed, "--check"); code != 1 || !strings.Contains(stderr, "deployment.apps/web would be updated") {
		t.Errorf("--check after the annotation changed: exit %d\n%s", code, stderr)
	}
	again, stderr, code := runCmd(t, "", "--local", "-f", changed)
	if code != 0 || !strings.Contains(stderr, "deployment.apps/web updated") {
		t.Fatalf("inject again: exit %d\n%s", code, stderr)
	}
	before, after := strings.Split(slurp(t, changed), "\n"), strings.Split(again, "\n")
	if len(before) != len(after) {
		t.Fatalf("injecting again added or removed lines:\n%s", again)
	}
	var diff []string
	for i := range before {
		if before[i] != after[i] {
			diff = append(diff, strings.TrimSpace(after[i]))
		}
	}
	if len(diff) != 2 || diff[1] != "cpu: 500m" || !strings.Contains(diff[0], `"values":{"cpu-request":"500m"}`) {
		t.Errorf("injecting again changed other lines than the record and the cpu request:\n%s", strings.Join(diff, "\n"))
	}
}

// TestLocalOverrideErrors: a bad override value fails the object, with a
// line naming the object and the annotation; a named profile reads its
// own override annotations only.
func TestLocalOverrideErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := []struct {
		name  string
		input string
		args  []string
		code  int
		want  []string
	}{
		{"bad quantity", withAnnotation("sidecar.kinject.dev/cpu-request", "lots"), nil, 1,
			[]string{"deployment.apps/web error:", `"sidecar.kinject.dev/cpu-request"`, `"lots" is not a resource quantity`}},
		{"bad integer", withAnnotation("sidecar.kinject.dev/concurrency", "many"), nil, 1,
			[]string{"deployment.apps/web error:", `"sidecar.kinject.dev/concurrency"`, `"many"`}},
		{"the profile's own annotation", withAnnotation("edge.sidecar.kinject.dev/cpu-request", "lots"), []string{"--profile", "edge"}, 1,
			[]string{"deployment.apps/web error:", `"edge.sidecar.kinject.dev/cpu-request"`}},
		{"another profile's annotation is not read", withAnnotation("edge.sidecar.kinject.dev/cpu-request", "lots"), nil, 0,
			[]string{"deployment.apps/web injected"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCmd(t, tc.input, append([]string{"--local", "-f", "-"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.code != 0 && out != tc.input {
				t.Errorf("a failed object was not printed as it was:\n%s", out)
			}
		})
	}
}

// TestProfileFlagErrors: bad profile names and flag combinations fail
// before anything is read, each with one message saying what to change.
func TestProfileFlagErrors(t *testing.T) {
	dir := t.TempDir()
	metrics := filepath.Join(dir, "metrics.yaml")
	writeFile(t, metrics, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: metrics}\nspec:\n  profile: metrics\n  template:\n    containers: [{name: exporter, image: prom/exporter:1}]\n")
	noProfile := filepath.Join(dir, "plain.yaml")
	writeFile(t, noProfile, "apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: plain}\nspec:\n  template:\n    containers: [{name: exporter, image: prom/exporter:1}]\n")
	appFile := filepath.Join(dir, "app.yaml")
	writeFile(t, appFile, app)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad name", []string{"--local", "-f", appFile, "--profile", "Logs"}, `--profile "Logs": not a valid name`},
		{"all profiles without uninject", []string{"--local", "-f", appFile, "--all-profiles"}, "--all-profiles removes the injections of every profile; it needs --uninject"},
		{"all profiles and a profile", []string{"--local", "-f", appFile, "--uninject", "--all-profiles", "--profile", "logs"}, "--all-profiles removes every profile; it cannot be combined with --profile"},
		{"template names another profile", []string{"--local", "-f", appFile, "--template", metrics, "--profile", "logs"},
			`--profile "logs" and spec.profile "metrics" of the template (SidecarInjection "metrics" in ` + metrics + `) name different profiles`},
		{"template names a profile, flag the default", []string{"--local", "-f", appFile, "--template", metrics, "--profile", ""},
			`--profile "" (the default profile) and spec.profile "metrics"`},
		{"live, bad name", []string{"deploy/web", "--profile", "a.b"}, `--profile "a.b": not a valid name`},
		{"status, bad name", []string{"status", "--profile", "-x"}, `--profile "-x": not a valid name`},
		{"status has no --all-profiles", []string{"status", "--all-profiles"}, "unknown flag: --all-profiles"},
		{"policy, bad name", []string{"policy", "--profile", "x_y"}, `--profile "x_y": not a valid name`},
		{"policy, template names another profile", []string{"policy", "--template", metrics, "--profile", "logs"}, `--profile "logs" and spec.profile "metrics"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
			out, stderr, code := runCmd(t, "", tc.args...)
			if code != 1 || out != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and %q", code, out, stderr, tc.want)
			}
		})
	}
	t.Run("the template's profile, or --profile where it has none", func(t *testing.T) {
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
		for _, args := range [][]string{{"--template", metrics}, {"--template", metrics, "--profile", "metrics"}, {"--template", noProfile, "--profile", "metrics"}} {
			out, stderr, code := runCmd(t, "", append([]string{"--local", "-f", appFile}, args...)...)
			if code != 0 || !strings.Contains(out, "metrics.sidecar.kinject.dev/status:") {
				t.Errorf("%v: exit %d, %s\n%s", args, code, stderr, out)
			}
		}
	})
}
