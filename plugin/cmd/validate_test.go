package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestFlagChecks: each command refuses a flag's value out of range, at
// its bound and past it, and accepts the bound itself: the value refused
// is named, and a value accepted gets no word about that flag (the
// command then goes on to the cluster, which does not answer).
func TestFlagChecks(t *testing.T) {
	unreachable := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(unreachable, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", unreachable)
	for _, tc := range []struct {
		name   string
		args   []string
		want   string // in stderr; "" for none
		absent string // never in stderr
	}{
		{"inject --concurrency 0", []string{"deploy/web", "--concurrency", "0"}, "--concurrency must be at least 1", ""},
		{"inject --concurrency 1", []string{"deploy/web", "--concurrency", "1"}, "", "--concurrency"},
		{"inject --qps -1", []string{"deploy/web", "--qps", "-1"}, "--qps must not be negative", ""},
		{"inject --qps 0", []string{"deploy/web", "--qps", "0"}, "", "--qps"},
		{"inject --burst 0 --qps 1", []string{"deploy/web", "--burst", "0", "--qps", "1"}, "--burst must be at least 1 when --qps is above 0", ""},
		{"inject --burst 0 --qps 0", []string{"deploy/web", "--burst", "0", "--qps", "0"}, "", "--burst"},
		{"policy --delete -o json", []string{"policy", "--delete", "-o", "json"}, "--delete prints one line per object; it cannot be combined with --output", ""},
		{"policy --delete", []string{"policy", "--delete"}, "", "--delete prints"},
		{"policy --apply --diff -o yaml", []string{"policy", "--apply", "--diff", "-o", "yaml"}, "--diff prints the change; it cannot be combined with --output", ""},
		{"policy --apply --diff", []string{"policy", "--apply", "--diff"}, "", "--diff prints"},
		{"restart --max-in-flight 1", []string{"restart", "--max-in-flight", "1"}, "", "--max-in-flight"},
		{"restart --progress-deadline 1ns", []string{"restart", "--progress-deadline", "1ns"}, "", "--progress-deadline"},
		{"status --chunk-size 0", []string{"status", "--chunk-size", "0"}, "--chunk-size must be at least 1", ""},
		{"status --chunk-size 1", []string{"status", "--chunk-size", "1"}, "", "--chunk-size"},
		{"status services", []string{"status", "services"}, `"services" is not a kind kubectl inject status shows`, ""},
		{"status deployments", []string{"status", "deployments"}, "", "is not a kind"},
		{"check -o yaml", []string{"check", "-o", "yaml"}, `--output must be json, not "yaml"`, ""},
		{"check -o json", []string{"check", "-o", "json"}, "", "--output"},
		{"check", []string{"check"}, "", "--output"},
		{"enable --profile default", []string{"enable", "shop", "--profile", "default"}, `--profile "default": the default profile has no name`, ""},
		{"enable --field-manager ''", []string{"enable", "shop", "--field-manager", ""}, "--field-manager must not be empty", ""},
		{"enable", []string{"enable", "shop", "--profile", "mesh"}, "", "--profile"},
		{"enable's field manager", []string{"enable", "shop"}, "", "--field-manager"},
		{"explain --namespace-labels", []string{"explain", "deploy/web", "--namespace-labels", "a=b"}, "--namespace-labels needs --local", ""},
		{"explain", []string{"explain", "deploy/web"}, "", "--namespace-labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, "", tc.args...)
			if code == 0 || tc.want != "" && !strings.Contains(stderr, tc.want) || tc.absent != "" && strings.Contains(stderr, tc.absent) {
				t.Errorf("exit %d, stderr:\n%s\nwant an error with %q, without %q", code, stderr, tc.want, tc.absent)
			}
			if tc.want == "" && !strings.Contains(stdout+stderr, "127.0.0.1:1") {
				t.Errorf("the flags accepted, it did not go on to the cluster:\n%s%s", stdout, stderr)
			}
		})
	}
}

// TestOneLine: an error from the cluster is put on one line and cut
// past 200 characters (runes, not bytes).
func TestOneLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 200)
	for _, tc := range []struct{ in, want string }{
		{"a\n  b\tc ", "a b c"},
		{long, long},
		{long + "x", long + "..."},
	} {
		if got := oneLine(tc.in); got != tc.want {
			t.Errorf("oneLine(%.20q...) = %.20q... (%d runes), want %d runes", tc.in, got, len([]rune(got)), len([]rune(tc.want)))
		}
	}
}

// TestLoggingVerbosity: at -v=0 client-go logs nothing, at -v=1 its
// lines reach the command's error stream.
func TestLoggingVerbosity(t *testing.T) {
	defer func() {
		if err := setUpLogging(0, io.Discard); err != nil {
			t.Error(err)
		}
	}()
	for _, tc := range []struct {
		verbosity int
		logged    bool
	}{{0, false}, {1, true}} {
		var out bytes.Buffer
		if err := setUpLogging(tc.verbosity, &out); err != nil {
			t.Fatal(err)
		}
		klog.Error("a client-go line")
		klog.Flush()
		if got := strings.Contains(out.String(), "a client-go line"); got != tc.logged {
			t.Errorf("-v=%d: logged %v (%q), want %v", tc.verbosity, got, out.String(), tc.logged)
		}
	}
}

// TestCheckExit: check exits 1 when a check failed, saying how many of
// all, and 0 when every check passed or only warned.
func TestCheckExit(t *testing.T) {
	t.Parallel()
	pass, warn, fail := checkResult{Status: checkOK}, checkResult{Status: checkWarn}, checkResult{Status: checkFail}
	if err := checkExit([]checkResult{pass, warn, pass}); err != nil {
		t.Errorf("passed and warned: %v, want exit 0", err)
	}
	var exit *ExitError
	if err := checkExit([]checkResult{pass, fail, warn, fail}); !errors.As(err, &exit) || exit.Code != 1 || err.Error() != "check: 2 of 4 checks failed" {
		t.Errorf("two failed: %v, want exit 1: check: 2 of 4 checks failed", err)
	}
}

// TestCheckPrint: check's checklist, by category, each check's mark and
// message and its hint, and as JSON with the count of checks failed.
func TestCheckPrint(t *testing.T) {
	t.Parallel()
	o := &CheckOptions{results: []checkResult{
		{Category: "cluster", Status: checkOK, Message: "reached"},
		{Category: "cluster", Status: checkFail, Message: "too old", Hint: "upgrade it"},
		{Category: "policy", Status: checkWarn, Message: "not installed"},
	}}
	var out bytes.Buffer
	if err := o.print(&out); err != nil {
		t.Fatal(err)
	}
	if want := "cluster\n  [ok]   reached\n  [FAIL] too old\n         hint: upgrade it\npolicy\n  [warn] not installed\n"; out.String() != want {
		t.Errorf("checklist:\n%s\nwant:\n%s", out.String(), want)
	}
	o.Output = "json"
	out.Reset()
	if err := o.print(&out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Checks []checkResult `json:"checks"`
		Failed int           `json:"failed"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Failed != 1 || !slices.Equal(got.Checks, o.results) {
		t.Errorf("JSON %s (%v), want the 3 checks and 1 failed", out.String(), err)
	}
}

// TestCheckNoCluster: without a cluster, check fails its one cluster
// check with the reason, and says so in its exit.
func TestCheckNoCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	out, stderr, code := runCmd(t, "", "check")
	if code != 1 || !strings.HasPrefix(out, "cluster\n  [FAIL] no cluster configured: no kubeconfig found") || strings.Count(out, "\n") != 2 ||
		stderr != "error: check: 1 of 1 checks failed\n" {
		t.Errorf("exit %d, stdout:\n%s\nstderr %q", code, out, stderr)
	}
}
