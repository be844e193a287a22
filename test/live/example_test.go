package live

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestExampleLive runs every console block of examples/live/README.md with
// the built plugin on PATH and compares the output.
func TestExampleLive(t *testing.T) {
	c.Require(t)
	readme, err := os.ReadFile("../../examples/live/README.md")
	if err != nil {
		t.Fatal(err)
	}
	steps := consoleSteps(string(readme))
	if len(steps) < 10 {
		t.Fatalf("only %d steps found in the README", len(steps))
	}
	path := pluginDir(t) + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, s := range steps {
		cmd := exec.Command("sh", "-c", s.command)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "PATH="+path, "KUBECONFIG="+c.AdminKubeconfig, "KUBECACHEDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		wantFail := strings.Contains(s.command, "--check") && !strings.Contains(s.want, "unchanged")
		if (err != nil) != wantFail {
			t.Errorf("$ %s: %v\n%s", s.command, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != s.want {
			t.Errorf("$ %s\ngot:\n%s\nwant:\n%s", s.command, got, s.want)
		}
	}
}

type step struct{ command, want string }

// consoleSteps extracts "$ command" lines and their output from ```console
// blocks.
func consoleSteps(md string) []step {
	var steps []step
	in := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```console"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "$ "):
			steps = append(steps, step{command: strings.TrimPrefix(line, "$ ")})
		case in && len(steps) > 0:
			s := &steps[len(steps)-1]
			if s.want != "" {
				s.want += "\n"
			}
			s.want += line
		}
	}
	return steps
}
