package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
)

// TestReadmePrerequisites: the README's "Try it" section, and the
// "What it needs" section of docs/testing.md, name every program the build
// and the tests need that nothing installs for the user (what
// hack/install-tools.sh checks, Docker, make, git, Go) and say how etcd gets
// installed (apt-get, sudo when not root); the README's section and
// docs/testing.md's "How long it takes" give first-run times.
func TestReadmePrerequisites(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot, "hack", "install-tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The tools the script expects and checks, but does not install itself.
	checked := regexp.MustCompile(`(?m)^check (\S+) `).FindAllStringSubmatch(string(script), -1)
	installed := regexp.MustCompile(`(?m)^  "([a-z0-9-]+)\|`).FindAllStringSubmatch(string(script), -1)
	own := map[string]bool{}
	for _, m := range installed {
		own[m[1]] = true
	}
	want := []string{"Go 1.26", "make", "git", "Docker", "apt-get", "sudo", "etcd"}
	for _, m := range checked {
		if !own[m[1]] && m[1] != "etcd" {
			want = append(want, m[1])
		}
	}
	minutes := regexp.MustCompile(`[0-9]+ min`)
	for _, s := range []struct{ file, needs, times string }{
		{"README.md", "## Try it (two commands)", "## Try it (two commands)"},
		{"docs/testing.md", "## What it needs", "## How long it takes"},
	} {
		section := mddoc.SectionOf(t, s.file, s.needs)
		for _, w := range want {
			if !strings.Contains(section, w) {
				t.Errorf("%s's %q section does not mention %q", s.file, s.needs, w)
			}
		}
		if !minutes.MatchString(mddoc.SectionOf(t, s.file, s.times)) {
			t.Errorf("%s's %q section gives no measured first-run time", s.file, s.times)
		}
	}
}
