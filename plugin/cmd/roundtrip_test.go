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

// TestGoldenLocalProfiles: through kubectl inject --local, two profiles
// (the embedded Envoy and logAgent, a partial Pod spec that --profile
// names) in both orders over the core's
// corpus: idempotent; --uninject of one profile gives what injecting only
// the other gives; --uninject --all-profiles gives the input back.
func TestGoldenLocalProfiles(t *testing.T) {
	dirs, err := filepath.Glob("../../pkg/inject/testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatal("no golden corpus")
	}
	logs := filepath.Join(t.TempDir(), "logs.yaml")
	writeFile(t, logs, logAgent)
	envoyArgs, logsArgs := []string{}, []string{"--profile", "logs", "--template", logs}
	inject := func(t *testing.T, file string, args []string) string {
		out, _, _ := runCmd(t, "", append([]string{"--local", "-f", file}, args...)...)
		path := filepath.Join(t.TempDir(), "out.yaml")
		writeFile(t, path, out)
		return path
	}
	for _, dir := range dirs {
		input := filepath.Join(dir, "input.yaml")
		if strings.Contains(slurp(t, input), ".dev/status") {
			continue
		}
		for name, order := range map[string][2][]string{"envoy+logs": {envoyArgs, logsArgs}, "logs+envoy": {logsArgs, envoyArgs}} {
			first, second := order[0], order[1]
			t.Run(filepath.Base(dir)+"/"+name, func(t *testing.T) {
				onlyFirst, onlySecond := inject(t, input, first), inject(t, input, second)
				both := inject(t, onlyFirst, second)
				if again := slurp(t, inject(t, both, first)); again != slurp(t, both) {
					t.Errorf("injecting the first profile again changed the output:\n%s", again)
				}
				if back, _, _ := runCmd(t, "", append([]string{"--local", "-f", both, "--uninject"}, second...)...); back != slurp(t, onlyFirst) {
					t.Errorf("uninject of the second profile != the first alone:\n%s", back)
				}
				if back, _, _ := runCmd(t, "", append([]string{"--local", "-f", both, "--uninject"}, first...)...); back != slurp(t, onlySecond) {
					t.Errorf("uninject of the first profile != the second alone:\n%s", back)
				}
				if back, _, _ := runCmd(t, "", "--local", "-f", both, "--uninject", "--all-profiles"); back != slurp(t, input) {
					t.Errorf("--all-profiles != the input:\n%s", back)
				}
			})
		}
	}
}
