package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInPlaceSeveralFiles: every file is streamed into its own temporary
// file; they replace the originals only when no document of any file
// failed, whichever file fails, and no temporary file is left behind.
func TestInPlaceSeveralFiles(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	const bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: nope\n"
	for _, order := range [][]string{{app, bad}, {bad, app}, {app, app + "---\n" + bad}} {
		dir := t.TempDir()
		var paths []string
		for i, content := range order {
			p := filepath.Join(dir, string(rune('a'+i))+".yaml")
			writeFile(t, p, content)
			paths = append(paths, p)
		}
		_, stderr, code := runCmd(t, "", "--local", "-f", dir, "--in-place")
		if code != 1 || !strings.Contains(stderr, "so no file was changed") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for i, p := range paths {
			if slurp(t, p) != order[i] {
				t.Errorf("%s was written although a document failed", p)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != len(order) {
			t.Errorf("temporary files left behind: %v", entries)
		}
	}

	// No failure: every changed file is replaced; an unchanged one is not
	// touched at all.
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeFile(t, a, app)
	writeFile(t, b, app)
	if _, stderr, code := runCmd(t, "", "--local", "-f", b, "--in-place"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	injected := slurp(t, b)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(b, old, old); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCmd(t, "", "--local", "-f", dir, "--in-place"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := slurp(t, a); got != injected {
		t.Errorf("a.yaml:\n%s\nwant:\n%s", got, injected)
	}
	if fi, _ := os.Stat(b); !fi.ModTime().Equal(old) || slurp(t, b) != injected {
		t.Errorf("b.yaml (already injected) was rewritten")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestLocalSeveralFilesStream: the printed stream of several files is the
// files' results joined by "---", a newline added where a file lacks one,
// and files without objects still take their place.
func TestLocalSeveralFilesStream(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	dir := t.TempDir()
	one, two, three := filepath.Join(dir, "1.yaml"), filepath.Join(dir, "2.yaml"), filepath.Join(dir, "3.yaml")
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: s}" // no final newline
	writeFile(t, one, svc)
	writeFile(t, two, "# only a comment\n")
	writeFile(t, three, svc)
	stdout, stderr, code := runCmd(t, "", "--local", "-f", one, "-f", two, "-f", three)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := svc + "\n---\n# only a comment\n---\n" + svc
	if stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	wantErr := one + ": service/s skipped"
	if !strings.HasPrefix(stderr, wantErr) {
		t.Errorf("stderr %q, want it to start with %q", stderr, wantErr)
	}
}
