package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the examples' expected output")

// Image is the tag the examples use; the tests build it from the working
// tree, as `make image` does.
const Image = "kinject/inject-fn:dev"

// KustomizeVersion is the pinned standalone kustomize.
const KustomizeVersion = "v5.8.0"

var (
	repoRoot = testbin.ModuleRoot()

	buildOnce sync.Once
	binDir    string
	buildErr  error

	imageOnce sync.Once
	imageErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "kinject-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = filepath.Join(dir, "bin")
	code := testbin.Run(m) // removes testbin.PluginDir's binaries too
	os.RemoveAll(dir)
	os.Exit(code)
}

// need finds a tool (testbin.NeedTool) and checks that it works: the pinned
// kustomize, a reachable Docker daemon.
func need(t *testing.T, tool string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped in -short mode")
	}
	path := testbin.NeedTool(t, tool)
	switch tool {
	case "kustomize":
		out, _ := exec.Command(path, "version").Output()
		if v := strings.TrimSpace(string(out)); v != KustomizeVersion {
			testbin.Missing(t, "%s is kustomize %q, want %s: run hack/install-tools.sh", path, v, KustomizeVersion)
		}
	case "docker":
		if out, err := exec.Command(path, "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
			testbin.Unavailable(t, "docker daemon not reachable: %v: %s", err, out)
		}
	}
	return path
}

// injectFn builds inject-fn from the working tree once and returns the
// directory holding it, to put on PATH.
func injectFn(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		start := time.Now()
		_, buildErr = testbin.BuildFunction(binDir)
		t.Logf("built inject-fn in %s", time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// image builds the inject-fn image with the repository's Dockerfile, from
// a context holding only what the Dockerfile copies.
func image(t *testing.T) {
	t.Helper()
	docker := need(t, "docker")
	bin := injectFn(t)
	imageOnce.Do(func() {
		start := time.Now()
		ctx := filepath.Join(filepath.Dir(bin), "image-context")
		for _, f := range []struct{ from, to string }{
			{filepath.Join(repoRoot, "Dockerfile"), "Dockerfile"},
			{filepath.Join(repoRoot, "fn", "image", "passwd"), "fn/image/passwd"},
			{filepath.Join(repoRoot, "fn", "image", "group"), "fn/image/group"},
			{filepath.Join(bin, "inject-fn"), "bin/inject-fn"},
			{filepath.Join(bin, testbin.Helper), "bin/" + testbin.Helper},
		} {
			if imageErr = copyFile(f.from, filepath.Join(ctx, f.to)); imageErr != nil {
				return
			}
		}
		cmd := exec.Command(docker, "build", "-q", "--build-arg", "BIN=bin/inject-fn", "-t", Image, ctx)
		if out, err := cmd.CombinedOutput(); err != nil {
			imageErr = fmt.Errorf("docker build: %v\n%s", err, out)
		}
		t.Logf("built %s in %s", Image, time.Since(start).Round(time.Millisecond))
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
}

// result is a finished command.
type result struct {
	stdout, stderr string
	code           int
}

// run runs a command in dir with inject-fn first on PATH.
func run(t *testing.T, dir string, name string, args ...string) result {
	t.Helper()
	return runEnv(t, dir, nil, name, args...)
}

// runEnv is run with extra environment variables.
func runEnv(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "PATH="+injectFn(t)+string(os.PathListSeparator)+os.Getenv("PATH"),
		// git: a fixed identity and no user or system config.
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", name, err)
		}
		r.code = exitErr.ExitCode()
	}
	t.Logf("%s %s: exit %d in %s", filepath.Base(name), strings.Join(args, " "), r.code, time.Since(start).Round(time.Millisecond))
	return r
}

// mustRun runs a command that must succeed.
func mustRun(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	r := run(t, dir, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	testbin.Golden(t, *update, path, got, "./test/e2e")
}

func rel(path string) string {
	if r, err := filepath.Rel(repoRoot, path); err == nil {
		return r
	}
	return path
}

// example returns the absolute path of an example.
func example(name string) string { return filepath.Join(repoRoot, "examples", name) }

// copyDir copies an example into a fresh directory.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	err := filepath.Walk(from, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		r, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		return copyFile(path, filepath.Join(to, r))
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	info, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, info.Mode().Perm())
}

// git runs git in dir (with a fixed identity, see run).
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return mustRun(t, dir, "git", args...)
}

// gitInit makes dir a repository with everything committed.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "before")
}

var indexLine = regexp.MustCompile(`(?m)^index [0-9a-f]+\.\.[0-9a-f]+( [0-7]+)?\n`)

// gitDiff is `git diff` without the blob hashes, as kpt's catalog harness
// compares it.
func gitDiff(t *testing.T, dir string) string {
	t.Helper()
	return indexLine.ReplaceAllString(git(t, dir, "diff", "--no-color", "--no-ext-diff"), "")
}

// writeFile writes a file in a test directory.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
