package static

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
)

// TestStaticDoc runs the command of docs/admission.md's static section
// (into a temporary directory for /etc/kubernetes/kinject): it writes
// the files the section lists and prints the configuration it shows.
func TestStaticDoc(t *testing.T) {
	const doc, heading = "docs/admission.md", "## Static manifests: injection from the API server's first request"
	section := mddoc.SectionOf(t, doc, heading)
	command, ok := mddoc.Block(section, "sh")
	if !ok {
		t.Fatalf("%s: no sh block", heading)
	}
	config, ok := mddoc.Block(section, "yaml")
	if !ok {
		t.Fatalf("%s: no yaml block", heading)
	}
	const docDir = "/etc/kubernetes/kinject"
	dir := t.TempDir()
	fields := strings.Fields(strings.TrimSpace(command))
	if len(fields) != 7 || strings.Join(fields[:4], " ") != "kubectl inject policy --static" || fields[4] != docDir || fields[5] != ">" {
		t.Fatalf("%s: the command is %q", heading, command)
	}
	out, stderr, code := kubectlInject(t, "policy", "--static", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := strings.ReplaceAll(config, docDir, dir); out != want {
		t.Errorf("the printed configuration is not the section's:\n%s\nwant:\n%s", out, want)
	}
	listed := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, docDir+"/") {
			continue
		}
		listed++
		if _, err := os.Stat(filepath.Join(dir, strings.TrimPrefix(line, docDir+"/"))); err != nil {
			t.Errorf("%s lists %s: %v", heading, line, err)
		}
	}
	written, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	if listed != 4 || len(written) != listed {
		t.Errorf("the section lists %d files, the command wrote %d", listed, len(written))
	}
}
