package cmd

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// TestRestartValidate reports every bad flag at once, before reading the
// cluster.
func TestRestartValidate(t *testing.T) {
	_, stderr, code := runCmd(t, "", "restart", "--max-in-flight", "0", "--progress-deadline", "0s", "-o", "yaml", "services")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	for _, want := range []string{
		"--output must be json",
		"--max-in-flight must be at least 1",
		"--progress-deadline must be positive",
		`"services" is not a kind kubectl inject restart handles`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestRestartHelp documents the steps, the exit codes and the RBAC page.
func TestRestartHelp(t *testing.T) {
	out, _, code := runCmd(t, "", "restart", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--max-in-flight", "--progress-deadline", "--recreate", "--dry-run", "restartedAt", "OnDelete", "exits 130", "docs/restart.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestRestartDefaults: the defaults docs/restart.md states.
func TestRestartDefaults(t *testing.T) {
	t.Parallel()
	c := NewCmdRestart(genericclioptions.NewConfigFlags(true), genericiooptions.NewTestIOStreamsDiscard())
	for flag, want := range map[string]string{
		"progress-deadline": "10m0s",
		"max-in-flight":     strconv.Itoa(rollout.DefaultMaxInFlight),
		"strategy":          "auto",
		"drain":             "true",
		"field-manager":     "kubectl-inject",
	} {
		if got := c.Flags().Lookup(flag).DefValue; got != want {
			t.Errorf("--%s defaults to %s, want %s", flag, got, want)
		}
	}
}
