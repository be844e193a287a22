package inject_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestOpenFuzzFinding pins the open finding kept under
// testdata/fuzz-open (docs/reliability.md): flow-style JSON with CR LF
// line ends and a key with no value before a comment, where injecting
// twice is not idempotent. It fails when that behaviour changes either
// way: once fixed, move the seed into testdata/fuzz/FuzzInject, where
// FuzzInject keeps it fixed, and drop this test and the note.
func TestOpenFuzzFinding(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/fuzz-open/FuzzInject/ccfaa69c4185e990")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 || lines[0] != "go test fuzz v1" {
		t.Fatalf("not a fuzz seed with a document and a template index:\n%s", data)
	}
	doc, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	which, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[2], "byte("), ")"))
	if err != nil || len(which) != 1 {
		t.Fatalf("template index %s: %v", lines[2], err)
	}
	injectors := fuzzTemplates(t)
	in := injectors[int(which[0])%len(injectors)]
	out, entries := in.ProcessText(inject.OpInject, []byte(doc), 0)
	if !inject.Report(entries).Changed() {
		t.Fatalf("the finding's document is no longer injected: %v", entries)
	}
	again, _ := in.ProcessText(inject.OpInject, out, 0)
	if bytes.Equal(again, out) {
		t.Fatal("injecting the finding's document twice is now idempotent: move the seed into testdata/fuzz/FuzzInject, drop this test and the open finding in docs/reliability.md")
	}
}
