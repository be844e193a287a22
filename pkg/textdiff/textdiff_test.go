package textdiff_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"added lines", "a\nb\nc\n", "a\nb\nx\ny\nc\n", "--- a\n+++ b\n@@ -1,3 +1,5 @@\n a\n b\n+x\n+y\n c\n"},
		{"changed line", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"no final newline", "a", "a\nb", "--- a\n+++ b\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n\\ No newline at end of file\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sb strings.Builder
			differ, err := textdiff.Write(&sb, "a", "b", tc.a, tc.b, textdiff.Options{})
			if err != nil || differ != (tc.want != "") || sb.String() != tc.want {
				t.Errorf("got (%v, %v):\n%s\nwant:\n%s", differ, err, sb.String(), tc.want)
			}
		})
	}
}

// TestPatchApplies: the diff applies with patch(1) when it is installed,
// and gives the new text.
func TestPatchApplies(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch(1) not installed")
	}
	dir := t.TempDir()
	a := strings.Repeat("line\n", 20) + "end\n"
	b := "first\n" + strings.Repeat("line\n", 10) + "middle\n" + strings.Repeat("line\n", 10) + "end\nlast\n"
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(a), 0o644); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if _, err := textdiff.Write(&sb, "f", "f", a, b, textdiff.Options{}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(patch, "-s", filepath.Join(dir, "f"))
	cmd.Stdin = strings.NewReader(sb.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s\n%s", err, out, sb.String())
	}
	got, _ := os.ReadFile(filepath.Join(dir, "f"))
	if string(got) != b {
		t.Errorf("patched:\n%s", got)
	}
}
