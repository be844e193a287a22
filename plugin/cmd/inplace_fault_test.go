package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/manifest/gen"
)

// buildPlugin builds kubectl-inject (and kinject-live beside it)
// for tests that need a real process.
func buildPlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return filepath.Join(testbin.PluginDir(t), testbin.Plugin)
}

func writeManifest(t *testing.T, dir string, apps int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := gen.Write(&buf, apps); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o640); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// TestInPlaceWriteError makes the write fail (a file size limit, as a full
// disk would) and checks that the original file is intact and no temporary
// file is left behind.
func TestInPlaceWriteError(t *testing.T) {
	bin := buildPlugin(t)
	dir := t.TempDir()
	path, original := writeManifest(t, dir, 50)
	// ulimit -f counts 1024-byte blocks: the injected file cannot be written.
	limit := len(original)/1024 + 2
	cmd := exec.Command("bash", "-c", `ulimit -f "$1" && exec "$2" --local --in-place -f "$3"`, "bash",
		strconv.Itoa(limit), bin, path)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "none"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the write succeeded under a %d KiB limit:\n%s", limit, out)
	}
	if !strings.Contains(string(out), "write "+path+": ") || !strings.Contains(string(out), "file too large") {
		t.Errorf("error does not say which file could not be written and why:\n%s", out)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, original) {
		t.Errorf("the original file changed after a failed write")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".app.yaml.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestInPlaceKilled kills the process at different moments of an in-place
// run: the file is always either the original or the complete result,
// never a part of either.
func TestInPlaceKilled(t *testing.T) {
	bin := buildPlugin(t)
	dir := t.TempDir()
	path, original := writeManifest(t, dir, 2000)
	env := append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "none"))

	complete := exec.Command(bin, "--local", "-f", path)
	complete.Env = env
	start := time.Now()
	want, err := complete.Output()
	if err != nil {
		t.Fatal(err)
	}
	// Spread the kills over the run, and a little past its end. The first,
	// sent as the process starts, lands before it can write anything.
	const kills = 12
	step := time.Since(start) / 9
	sawOriginal, sawResult := 0, 0
	for i := range kills {
		got := runInPlace(t, bin, env, path, original, time.Duration(i)*step, true)
		switch {
		case bytes.Equal(got, original):
			sawOriginal++
		case bytes.Equal(got, want):
			sawResult++
		default:
			t.Fatalf("kill after %s left a file that is neither the original nor the result (%d bytes)", time.Duration(i)*step, len(got))
		}
		if i == 0 && !bytes.Equal(got, original) {
			t.Errorf("the kill sent as the process started left the result: the run wrote before it could have read its input")
		}
	}
	// How the kills between split depends on the load: not a number a test
	// can hold; both outcomes are held by the first kill and the run below.
	t.Logf("%d kills: %d left the original, %d the complete result", kills, sawOriginal, sawResult)
	// The same run, not killed: the complete result, so that a run that
	// never writes cannot pass as one killed every time before its write.
	if got := runInPlace(t, bin, env, path, original, 0, false); !bytes.Equal(got, want) {
		t.Errorf("the run not killed left %d bytes, not the complete result", len(got))
	}
}

// runInPlace writes original to path and runs the plugin in place on it,
// killed after wait when kill is set, and returns the file it leaves.
func runInPlace(t *testing.T, bin string, env []string, path string, original []byte, wait time.Duration, kill bool) []byte {
	t.Helper()
	if err := os.WriteFile(path, original, 0o640); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--local", "--in-place", "-f", path)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if kill {
		time.Sleep(wait)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	} else if err := cmd.Wait(); err != nil {
		t.Fatalf("in place: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
