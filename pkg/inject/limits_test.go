package inject_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestResourceLimits feeds hostile input: each case must finish, keep
// memory bounded by one document, and give a clear answer.
func TestResourceLimits(t *testing.T) {
	t.Parallel()
	bomb := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: laughs\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: busybox\n        env:\n        - &a0 {name: A, value: lol}\n"
	for i := 1; i < 30; i++ {
		bomb += fmt.Sprintf("        - &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: " + strings.Repeat("x", 50<<20) + "\n"
	deep := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	cases := []struct {
		name, doc  string
		wantAction inject.Action
		wantInMsg  string
	}{
		{"alias bomb is never expanded", bomb, inject.Injected, ""},
		{"50 MB document is refused", big, inject.Failed, "50.0 MiB, larger than the 8 MiB limit"},
		{"deep nesting is refused", deep, inject.Failed, "exceeded max depth"},
	}
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, entries := in.ProcessText(inject.OpInject, []byte(c.doc), 0)
			if len(entries) != 1 || entries[0].Action != c.wantAction || !strings.Contains(entries[0].Message, c.wantInMsg) {
				t.Fatalf("entries = %v, want one %s mentioning %q", entries, c.wantAction, c.wantInMsg)
			}
			if c.wantAction == inject.Failed && !bytes.Equal(out, []byte(c.doc)) {
				t.Errorf("a refused document must pass through unchanged")
			}
		})
	}
}

// TestManyDocuments runs 100,000 tiny documents through the stream path.
func TestManyDocuments(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow")
	}
	var src bytes.Buffer
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&src, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	out, report := run(t, in, inject.OpInject, src.Bytes())
	if len(report) != 100000 || report.Changed() || !bytes.Equal(out, src.Bytes()) {
		t.Errorf("got %d entries (changed: %v); want 100000 untouched", len(report), report.Changed())
	}
}

// TestDocumentSizeLimit: a document of MaxDocumentBytes is read; one
// byte more is refused, as too large.
func TestDocumentSizeLimit(t *testing.T) {
	t.Parallel()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	head := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: "
	for _, c := range []struct {
		size    int
		refused bool
	}{{inject.MaxDocumentBytes, false}, {inject.MaxDocumentBytes + 1, true}} {
		doc := head + strings.Repeat("x", c.size-len(head)-1) + "\n"
		_, entries := in.ProcessText(inject.OpInject, []byte(doc), 0)
		if len(entries) != 1 || (entries[0].Action == inject.Failed) != c.refused || (c.refused && entries[0].Reason != inject.ReasonTooLarge) {
			t.Errorf("a document of %d bytes: %v, want refused %v", len(doc), entries, c.refused)
		}
	}
}
