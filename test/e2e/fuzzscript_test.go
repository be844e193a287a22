package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeGo answers as `go test -fuzz` does in three situations, counting
// its runs in $FAKE_COUNT.
const fakeGo = `#!/usr/bin/env bash
n=$(cat "$FAKE_COUNT" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$FAKE_COUNT"
case "$FAKE_MODE" in
  timeout-once) if [[ $n == 1 ]]; then echo "    context deadline exceeded"; exit 1; fi; echo PASS; exit 0;;
  finding) echo "    Failing input written to testdata/fuzz/FuzzX/abc"; echo "    context deadline exceeded"; exit 1;;
  timeout-always) echo "    context deadline exceeded"; exit 1;;
esac
`

// TestFuzzScript: hack/fuzz.sh runs a target once more only when Go's
// engine timed out at the end without a failing input.
func TestFuzzScript(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode       string
		code, runs int
	}{
		{"timeout-once", 0, 2},
		{"finding", 1, 1},
		{"timeout-always", 1, 2},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			count := filepath.Join(t.TempDir(), "count")
			cmd := exec.Command("bash", filepath.Join(repoRoot, "hack", "fuzz.sh"), "./x", "FuzzX", "1s")
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_MODE="+tc.mode, "FAKE_COUNT="+count)
			err := cmd.Run()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			runs, _ := os.ReadFile(count)
			if code != tc.code || strings.TrimSpace(string(runs)) != strconv.Itoa(tc.runs) {
				t.Errorf("exit %d after %s runs, want exit %d after %d", code, strings.TrimSpace(string(runs)), tc.code, tc.runs)
			}
		})
	}
}
