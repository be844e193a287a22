package cmd

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// runPlugin runs the built kubectl-inject in dir and returns its stderr
// and exit code.
func runPlugin(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(buildPlugin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "no-kubeconfig"))
	code, _, stderr := testbin.Exec(t, cmd)
	return stderr, code
}

// layout writes files (path: content) under dir and links (path: target).
func layout(t *testing.T, dir string, files, links map[string]string) {
	t.Helper()
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	for name, target := range links {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
}

// assertLink checks that path is still a symbolic link to target.
func assertLink(t *testing.T, path, target string) {
	t.Helper()
	got, err := os.Readlink(path)
	if err != nil || got != target {
		t.Errorf("%s: want a link to %s, got %q (%v)", path, target, got, err)
	}
}

func injected(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), "- name: envoy")
}

// TestInPlaceSymlinks: --in-place writes the file a link points to and
// keeps the link; in a walk a file reached through a link and directly is
// edited once; a link in a walked directory that points outside the paths
// given is an error (nothing written) unless --follow-external-links.
func TestInPlaceSymlinks(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		links map[string]string
		args  []string
		code  int
		// stderr must hold each of these; injected and unchanged name the
		// files that must (not) hold the sidecar afterwards.
		stderr    []string
		injected  []string
		unchanged []string
		// reports is how many report lines say "injected".
		reports int
	}{{
		name:     "a named link",
		files:    map[string]string{"real.yaml": app},
		links:    map[string]string{"link.yaml": "real.yaml"},
		args:     []string{"-f", "link.yaml"},
		stderr:   []string{"link.yaml: deployment.apps/web injected"},
		injected: []string{"real.yaml"},
		reports:  1,
	}, {
		name:     "a symlinked base in a walk",
		files:    map[string]string{"k/base/app.yaml": app},
		links:    map[string]string{"k/overlay/app.yaml": "../base/app.yaml"},
		args:     []string{"-f", "k", "-R"},
		stderr:   []string{"k/base/app.yaml: deployment.apps/web injected"},
		injected: []string{"k/base/app.yaml"},
		reports:  1,
	}, {
		name:     "a link walked before its target",
		files:    map[string]string{"k/z/app.yaml": app},
		links:    map[string]string{"k/a.yaml": "z/app.yaml"},
		args:     []string{"-f", "k", "-R"},
		stderr:   []string{"k/a.yaml: deployment.apps/web injected"},
		injected: []string{"k/z/app.yaml"},
		reports:  1,
	}, {
		name:     "a file named twice",
		files:    map[string]string{"app.yaml": app},
		args:     []string{"-f", "app.yaml", "-f", "app.yaml"},
		stderr:   []string{"app.yaml: deployment.apps/web injected"},
		injected: []string{"app.yaml"},
		reports:  1,
	}, {
		name:      "a link outside the paths given",
		files:     map[string]string{"k/base/app.yaml": app},
		links:     map[string]string{"k/overlay/app.yaml": "../base/app.yaml"},
		args:      []string{"-f", "k/overlay", "-R"},
		code:      1,
		stderr:    []string{"k/overlay/app.yaml is a symbolic link to ", "outside the paths given with -f", "--follow-external-links"},
		unchanged: []string{"k/base/app.yaml"},
	}, {
		name:     "a link outside the paths given, allowed",
		files:    map[string]string{"k/base/app.yaml": app},
		links:    map[string]string{"k/overlay/app.yaml": "../base/app.yaml"},
		args:     []string{"-f", "k/overlay", "-R", "--follow-external-links"},
		stderr:   []string{"k/overlay/app.yaml: deployment.apps/web injected"},
		injected: []string{"k/base/app.yaml"},
		reports:  1,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			layout(t, dir, c.files, c.links)
			stderr, code := runPlugin(t, dir, append([]string{"--local", "--in-place"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s", code, c.code, stderr)
			}
			for _, want := range c.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if n := strings.Count(stderr, " injected\n"); n != c.reports {
				t.Errorf("%d objects injected, want %d (each file edited once):\n%s", n, c.reports, stderr)
			}
			for name, target := range c.links {
				assertLink(t, filepath.Join(dir, name), target)
			}
			for _, name := range c.injected {
				if !injected(t, filepath.Join(dir, name)) {
					t.Errorf("%s was not injected", name)
				}
			}
			for _, name := range c.unchanged {
				if got := slurp(t, filepath.Join(dir, name)); got != c.files[name] {
					t.Errorf("%s changed:\n%s", name, got)
				}
			}
			if c.code == 0 {
				// Injected once: a second run finds everything current.
				check := []string{"--local", "--check"}
				for _, a := range c.args {
					if a != "--follow-external-links" { // --in-place only
						check = append(check, a)
					}
				}
				if stderr, code := runPlugin(t, dir, check...); code != 0 {
					t.Errorf("--check after the run: exit %d\n%s", code, stderr)
				}
			}
		})
	}
}

// TestInPlaceFileModes: --in-place keeps the file's mode and (where the
// process may set it: as root here) its owner and group, and refuses a
// file the user may not write, leaving it unchanged. As root, who may
// write anything, a file without write permission for its owner counts as
// read-only.
func TestInPlaceFileModes(t *testing.T) {
	cases := []struct {
		name string
		mode fs.FileMode
		// owner, when set, chowns the file first (root only).
		owner  bool
		code   int
		stderr string
	}{
		{name: "0640 stays 0640", mode: 0o640},
		{name: "0600 stays 0600", mode: 0o600},
		{name: "0444 is refused", mode: 0o444, code: 1, stderr: "error: write app.yaml: "},
		{name: "0400 is refused", mode: 0o400, code: 1, stderr: "error: write app.yaml: "},
		{name: "owner and group kept", mode: 0o644, owner: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.owner && os.Geteuid() != 0 {
				t.Skip("changing a file's owner takes root")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "app.yaml")
			writeFile(t, path, app)
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			if c.owner {
				if err := os.Chown(path, 4321, 4322); err != nil {
					t.Fatal(err)
				}
			}
			stderr, code := runPlugin(t, dir, "--local", "--in-place", "-f", "app.yaml")
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d, want %d with %q\n%s", code, c.code, c.stderr, stderr)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != c.mode {
				t.Errorf("mode %04o, want %04o", info.Mode().Perm(), c.mode)
			}
			if c.code != 0 {
				if got := slurp(t, path); got != app {
					t.Errorf("a refused file changed:\n%s", got)
				}
				if !strings.Contains(stderr, "read-only") && !strings.Contains(stderr, "may not write") {
					t.Errorf("the error does not say why:\n%s", stderr)
				}
			} else if !injected(t, path) {
				t.Errorf("not injected:\n%s", stderr)
			}
			if c.owner {
				st := info.Sys().(*syscall.Stat_t)
				if st.Uid != 4321 || st.Gid != 4322 {
					t.Errorf("owner %d:%d, want 4321:4322", st.Uid, st.Gid)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".app.yaml.tmp-*")); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

// TestInPlaceReadOnlyAmongOthers: a read-only file among writable ones
// stops the run before any file is replaced (all or nothing, as a failed
// document does), and no temporary file is left.
func TestInPlaceReadOnlyAmongOthers(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		writeFile(t, filepath.Join(dir, "k", name), app)
	}
	if err := os.Chmod(filepath.Join(dir, "k", "b.yaml"), 0o444); err != nil {
		t.Fatal(err)
	}
	stderr, code := runPlugin(t, dir, "--local", "--in-place", "-R", "-f", "k")
	if code != 1 || !strings.Contains(stderr, "error: write k/b.yaml: ") {
		t.Fatalf("exit %d, want 1 naming k/b.yaml\n%s", code, stderr)
	}
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		if got := slurp(t, filepath.Join(dir, "k", name)); got != app {
			t.Errorf("k/%s changed although the run failed:\n%s", name, got)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "k", ".*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
