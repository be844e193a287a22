package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmePrerequisites: the README's "Try it" section names every
// program the build and the tests need that nothing installs for the user
// (what hack/install-tools.sh checks, Docker, make, git, Go), says how etcd
// gets installed (apt-get, sudo when not root), and gives first-run times.
func TestReadmePrerequisites(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## Try it")
	if start < 0 {
		t.Fatal("README.md has no Try it section")
	}
	section := readme[start+1:]
	section = section[:strings.Index(section, "\n## ")+1]

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
	for _, w := range want {
		if !strings.Contains(section, w) {
			t.Errorf("the README's Try it section does not mention %q", w)
		}
	}
	if !regexp.MustCompile(`[0-9]+ min`).MatchString(section) {
		t.Error("the README's Try it section gives no measured first-run time")
	}
}
