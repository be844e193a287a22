package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenLocalRoundTrip: through kubectl inject --local, every case of
// the core's corpus injects idempotently, and --uninject gives the input
// back byte for byte (for inputs without a status record).
func TestGoldenLocalRoundTrip(t *testing.T) {
	dirs, err := filepath.Glob("../../pkg/inject/testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatal("no golden corpus")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var template []string
			if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
				template = []string{"--template", filepath.Join(dir, "config.yaml")}
			}
			input := slurp(t, filepath.Join(dir, "input.yaml"))
			out, _, _ := runCmd(t, "", append([]string{"--local", "-f", filepath.Join(dir, "input.yaml")}, template...)...)
			injected := filepath.Join(t.TempDir(), "injected.yaml")
			writeFile(t, injected, out)
			if again, _, _ := runCmd(t, "", append([]string{"--local", "-f", injected}, template...)...); again != out {
				t.Errorf("inject(inject(x)) != inject(x):\n%s", again)
			}
			if strings.Contains(input, "sidecar.kinject.dev/status") {
				return
			}
			if back, _, _ := runCmd(t, "", append([]string{"--local", "-f", injected, "--uninject"}, template...)...); back != input {
				t.Errorf("uninject(inject(x)) != x:\n%q\nwant:\n%q", back, input)
			}
		})
	}
}
