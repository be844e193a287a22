package main

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestHelpShowsDefaultTemplate: inject-fn --help (the built binary) ends
// with the embedded default template, every line of it, in order, as the
// README says.
func TestHelpShowsDefaultTemplate(t *testing.T) {
	code, stdout, _ := run(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	_, shown, found := strings.Cut(stdout, "\nDEFAULT TEMPLATE (embedded; injected when the config gives none)\n")
	if !found {
		t.Fatalf("--help has no DEFAULT TEMPLATE section:\n%s", stdout)
	}
	var want []string
	for _, line := range strings.Split(inject.DefaultTemplateYAML(), "\n") {
		if strings.TrimSpace(line) != "" {
			want = append(want, "  "+line)
		}
	}
	var got []string
	for _, line := range strings.Split(shown, "\n") {
		if strings.TrimSpace(line) != "" {
			got = append(got, line)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("--help shows:\n%s\nwant the embedded template, indented:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(shown, "image: envoyproxy/envoy:") {
		t.Errorf("--help does not show the pinned image")
	}
}
