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

// TestSections: a hunk's header names the sections (objects) it
// changes; a line added at the end of a section is that section's change.
func TestSections(t *testing.T) {
	a := "kind: A\nx: 1\n---\nkind: B\n" + strings.Repeat("y: 1\n", 10) + "---\nkind: C\nz: 1\n"
	b := "kind: A\nx: 1\nadded: a\n---\nkind: B\n" + strings.Repeat("y: 1\n", 10) + "---\nkind: C\nz: 1\nadded: c\n"
	sections := []textdiff.Section{{Line: 1, Name: "a/one"}, {Line: 4, Name: "b/two"}, {Line: 16, Name: "c/three"}}
	var sb strings.Builder
	if _, err := textdiff.Write(&sb, "f", "f", a, b, textdiff.Options{Sections: sections}); err != nil {
		t.Fatal(err)
	}
	var headers []string
	for _, l := range strings.Split(sb.String(), "\n") {
		if strings.HasPrefix(l, "@@") {
			headers = append(headers, l)
		}
	}
	want := []string{"@@ -1,5 +1,6 @@ a/one", "@@ -15,3 +16,4 @@ c/three"}
	if strings.Join(headers, "\n") != strings.Join(want, "\n") {
		t.Errorf("hunk headers:\n%s\nwant:\n%s\n%s", strings.Join(headers, "\n"), strings.Join(want, "\n"), sb.String())
	}
	// Two sections' changes close together share a hunk that names both.
	sb.Reset()
	close := "kind: A\nx: 1\n---\nkind: B\ny: 1\n"
	if _, err := textdiff.Write(&sb, "f", "f", close, "kind: A\nx: 1\nadded: a\n---\nkind: B\ny: 1\nadded: b\n", textdiff.Options{Sections: sections[:2]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "@@ -1,5 +1,7 @@ a/one, b/two\n") {
		t.Errorf("one hunk for both:\n%s", sb.String())
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
	// Section names after the hunk ranges do not disturb patch(1).
	if _, err := textdiff.Write(&sb, "f", "f", a, b, textdiff.Options{Sections: []textdiff.Section{{Line: 1, Name: "pod/a"}, {Line: 12, Name: "pod/b"}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "@@ pod/a\n") || !strings.Contains(sb.String(), "@@ pod/b\n") {
		t.Errorf("section names missing:\n%s", sb.String())
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
