package krew

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/mddoc"
)

// TestReadmeKrew runs the README's krew install commands as written, in a
// copy of the working tree (a repository of its own, so that `make -s
// version` names its commit), with krew installed as kubectl's plugin and a
// KREW_ROOT of its own; then kubectl lists one plugin, inject, which runs
// and reports the version make gave it.
func TestReadmeKrew(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the release archive")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the README's commands are for a POSIX shell")
	}
	krew := tool(t, "krew")
	kubectl := tool(t, "kubectl")
	block := mddoc.ShBlock(t, "README.md", "### krew")
	src := copyTree(t)

	// kubectl runs krew as its plugin "krew", found on PATH.
	tools := t.TempDir()
	if err := os.Symlink(krew, filepath.Join(tools, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	krewRoot := t.TempDir()
	path := filepath.Join(krewRoot, "bin") + string(os.PathListSeparator) + tools + string(os.PathListSeparator) + existingDirs(os.Getenv("PATH"))
	env := append(os.Environ(), "PATH="+path, "KREW_ROOT="+krewRoot, "KREW_NO_UPGRADE_CHECK=1",
		"HOME="+t.TempDir(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"), "KUBECACHEDIR="+t.TempDir())
	start := time.Now()
	out := runIn(t, src, env, "sh", "-ex", "-c", block)
	t.Logf("the README's krew commands (%s):\n%s", time.Since(start).Round(time.Second), out)

	version := strings.TrimSpace(runIn(t, src, env, "make", "-s", "version"))
	if got := runIn(t, src, env, kubectl, "inject", "--version"); got != "kubectl-inject "+version+"\n" {
		t.Errorf("kubectl inject --version: %q, want the version make gave: %q", got, version)
	}
	checkPluginList(t, runIn(t, src, env, kubectl, "plugin", "list", "--name-only"))
	if got := runIn(t, src, env, kubectl, "inject", "--local", "-f", filepath.Join("examples", "cli", "app.yaml")); !strings.Contains(got, "sidecar.kinject.dev/status") {
		t.Errorf("kubectl inject --local through krew:\n%s", got)
	}
}

// TestReadmeGoInstall runs the README's go install commands as written
// (plugin/kubectl-inject, plugin/kinject-live, plugin/kinject-cel, fn/inject-fn), in a clean
// GOPATH, against a module proxy on disk that serves a copy of the working
// tree as github.com/kinject/kubectl-inject v0.1.0 (its dependencies come
// from the local module cache): the four binaries land beside each other
// under their names with no renaming, kubectl lists one plugin, which
// reports the module's version and injects a file with --local.
func TestReadmeGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binaries")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the README's commands are for a POSIX shell")
	}
	kubectl := tool(t, "kubectl")
	block := mddoc.ShBlock(t, "README.md", "### Go")
	const version = "v0.1.0"
	proxy := moduleProxy(t, copyTree(t), version)
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gopath := t.TempDir()
	env := append(os.Environ(),
		"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN=",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download")),
		"GOSUMDB=off", "GOPRIVATE=", "GONOPROXY=", "GOTOOLCHAIN=local", "GOWORK=off",
		// Built as the releases are, so that the build cache serves the dependencies.
		"CGO_ENABLED=0", "GOFLAGS=-trimpath")
	start := time.Now()
	out := runIn(t, t.TempDir(), env, "sh", "-ex", "-c", block)
	t.Logf("the README's go install commands (%s):\n%s", time.Since(start).Round(time.Second), out)

	bin := filepath.Join(gopath, "bin")
	entries, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "inject-fn kinject-cel kinject-live kubectl-inject" {
		t.Errorf("%s holds %v, want inject-fn, kinject-cel, kinject-live and kubectl-inject", bin, names)
	}
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+filepath.Dir(kubectl), "HOME="+t.TempDir(),
		"KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	checkPluginList(t, runIn(t, bin, env, kubectl, "plugin", "list", "--name-only"))
	for _, c := range []struct{ args, want string }{
		{"inject --version", "kubectl-inject " + version + "\n"}, // served by kinject-live, found beside kubectl-inject
	} {
		if got := runIn(t, bin, env, kubectl, strings.Fields(c.args)...); got != c.want {
			t.Errorf("kubectl %s: %q, want %q", c.args, got, c.want)
		}
	}
	// --local is served by kubectl-inject itself.
	app := filepath.Join(repoRoot(t), "examples", "cli", "app.yaml")
	if got := runIn(t, bin, env, kubectl, "inject", "--local", "-f", app); !strings.Contains(got, "sidecar.kinject.dev/status") {
		t.Errorf("kubectl inject --local after go install:\n%s", got)
	}
	if got := runIn(t, bin, env, filepath.Join(bin, "inject-fn"), "--version"); got != "inject-fn "+version+"\n" {
		t.Errorf("inject-fn --version: %q", got)
	}
}

// existingDirs keeps the directories of a PATH list that exist: kubectl
// plugin list complains about the others, which is not what is tested.
func existingDirs(list string) string {
	var keep []string
	for _, d := range filepath.SplitList(list) {
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// checkPluginList checks the output of kubectl plugin list --name-only:
// inject once, its helper never, and no warning (about a plugin that
// shadows another or cannot run).
func checkPluginList(t *testing.T, out string) {
	t.Helper()
	inject := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "kubectl-inject":
			inject++
		case strings.Contains(line, "kinject-live"), strings.Contains(strings.ToLower(line), "warning"), strings.HasPrefix(line, "stderr:"):
			t.Errorf("kubectl plugin list: %q", line)
		}
	}
	if inject != 1 {
		t.Errorf("kubectl plugin list shows inject %d times:\n%s", inject, out)
	} else if t.Failed() {
		t.Logf("kubectl plugin list:\n%s", out)
	}
}

// runIn runs a command in dir with env and returns its stdout; it must succeed.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String() + strings.TrimSpace(filterNoise(stderr.String()))
}

// filterNoise drops the lines of stderr that tests do not compare: sh -x
// traces and krew's and dist's progress. What remains is appended to
// stdout, so that a command's unexpected complaint shows in the comparison.
func filterNoise(stderr string) string {
	var keep []string
	for _, line := range strings.Split(stderr, "\n") {
		if line == "" || strings.HasPrefix(line, "+ ") {
			continue
		}
		keep = append(keep, line)
	}
	if len(keep) == 0 {
		return ""
	}
	return "\nstderr:\n" + strings.Join(keep, "\n")
}

// copyTree copies the working tree (tracked files and untracked ones that
// are not ignored) into a new repository with one commit, and returns it.
func copyTree(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "kubectl-inject")
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		from := filepath.Join(root, name)
		info, err := os.Lstat(from)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dst
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "the working tree")
	return dst
}

// moduleProxy writes a GOPROXY directory serving the module in src as
// github.com/kinject/kubectl-inject at version, the only one it lists.
func moduleProxy(t *testing.T, src, version string) string {
	t.Helper()
	const module = "github.com/kinject/kubectl-inject"
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(fmt.Sprintf(`{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, version)),
		version + ".mod":  gomod,
		version + ".zip":  moduleZip(t, src, module+"@"+version),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proxy
}

// moduleZip zips a module as the go command expects: every file under
// prefix/, except .git and nested modules (directories with a go.mod of
// their own, such as hack/apiserver).
func moduleZip(t *testing.T, src, prefix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel != "." {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		w, err := zw.Create(prefix + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
