package inject_test

import (
	"bytes"
	"io"
	"strings"

	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// TestParseDocument: a document is read as ProcessText reads it: JSON's
// "\/" escape is "/" wherever it is, whatever else the strings hold, and
// text holding a second document is an error.
func TestParseDocument(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		key, want string // the value of key; "" for an error
	}{
		{"escaped solidus", `{"a": "\/x\/"}`, "a", "/x/"},
		{"in a key", `{"a\/b": "c"}`, "a/b", "c"},
		{"escaped backslash before a solidus", `{"a": "\\/x"}`, "a", `\/x`},
		{"escaped backslash, then an escaped solidus", `{"a": "\\\/x"}`, "a", `\/x`},
		{"bell written as an escape", `{"a": "\u0007\/"}`, "a", "\a/"},
		{"every stand-in written as an escape", `{"a": "\u0007\u000B\u001b\u0000 \/"}`, "a", "\a\v\x1b\x00 /"},
		{"lines ended by CR", "{\r  \"b\": 1,\r  \"a\": \"\\/x\"\r}\r", "a", "/x"},
		{"lines ended by CRLF", "{\r\n  \"b\": \"\u00e9\",\r\n  \"a\": \"\u00e9\\/x\"\r\n}\r\n", "a", "\u00e9/x"},
		{"solidus in YAML", "a: '\\/x'\n", "a", `\/x`},
		{"two JSON values", "{\"a\": 1}\n{\"b\": 2}\n", "a", ""},
		{"a second YAML document", "a: 1\n...\nb: 2\n", "a", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n, err := inject.ParseDocument([]byte(c.src))
			if c.want == "" {
				if err == nil {
					t.Errorf("no error; want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Field(c.key); got == nil || got.Value.YNode().Value != c.want {
				t.Errorf("%s = %v, want %q", c.key, got, c.want)
			}
		})
	}
}

// TestParsedAhead: every golden case, its documents parsed on other
// goroutines ahead of the one processed (as the front ends read a stream),
// gives the output and the report of ProcessText, for both operations. Each
// case's input is repeated into a stream longer than manifest.SmallStream,
// which ProcessAhead would handle on one goroutine.
func TestParsedAhead(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		doc := append(bytes.TrimRight(c.input, "\n"), "\n---\n"...)
		input := bytes.Repeat(doc, manifest.SmallStream/len(doc)+1)
		for _, op := range []inject.Op{inject.OpInject, inject.OpUninject} {
			want, wantReport := run(t, c.injector, op, input)
			var out bytes.Buffer
			var report inject.Report
			err := manifest.ProcessAhead(bytes.NewReader(input), &out, inject.ParseDocuments, func(_ manifest.Document, p *inject.Parsed) []byte {
				res, entries := c.injector.ProcessParsed(op, p)
				report = append(report, entries...)
				return res
			})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s, %v: output differs from ProcessText's:\n%s", c.name, op, out.Bytes())
			}
			if got, want := reportText(report), reportText(wantReport); got != want {
				t.Errorf("%s, %v: report\n%s\nProcessText's:\n%s", c.name, op, got, want)
			}
		}
	}
}

// TestParseDocumentsAsParseText: every golden case's documents, parsed
// together by ParseDocuments (one parser for as many as it can), give the
// output and the report of ProcessText, for both operations, on any
// number of cores.
func TestParseDocumentsAsParseText(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		for _, op := range []inject.Op{inject.OpInject, inject.OpUninject} {
			want, wantReport := run(t, c.injector, op, c.input)
			var docs []manifest.Document
			if err := manifest.ProcessDocuments(bytes.NewReader(c.input), io.Discard, func(d manifest.Document) []byte {
				d.Text = bytes.Clone(d.Text) // valid only during the call
				docs = append(docs, d)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			parsed := inject.ParseDocuments(docs)
			if len(parsed) != len(docs) {
				t.Fatalf("%s: %d documents parsed as %d", c.name, len(docs), len(parsed))
			}
			var out bytes.Buffer
			var report inject.Report
			err := manifest.ProcessDocuments(bytes.NewReader(c.input), &out, func(d manifest.Document) []byte {
				res, entries := c.injector.ProcessParsed(op, parsed[d.Index])
				report = append(report, entries...)
				return res
			})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s, %v: output differs from ProcessText's:\n%s", c.name, op, out.Bytes())
			}
			if got, want := reportText(report), reportText(wantReport); got != want {
				t.Errorf("%s, %v: report\n%s\nProcessText's:\n%s", c.name, op, got, want)
			}
		}
	}
}

// TestParseDocumentsTooLarge: a document over the size limit, between
// two others, is refused as ParseText refuses it, and the others are
// injected.
func TestParseDocumentsTooLarge(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: app, image: app}]}\n"
	large := pod + "# " + strings.Repeat("x", inject.MaxDocumentBytes) + "\n"
	docs := []manifest.Document{{Index: 0, Text: []byte(pod)}, {Index: 1, Text: []byte(large)}, {Index: 2, Text: []byte(pod)}}
	for i, p := range inject.ParseDocuments(docs) {
		_, got := in.ProcessParsed(inject.OpInject, p)
		_, want := in.ProcessParsed(inject.OpInject, inject.ParseText(docs[i].Text, docs[i].Index))
		if reportText(got) != reportText(want) {
			t.Errorf("document %d: %s\nParseText's: %s", i, reportText(got), reportText(want))
		}
		if wantAction := map[bool]inject.Action{true: inject.Failed, false: inject.Injected}[i == 1]; len(got) != 1 || got[0].Action != wantAction {
			t.Errorf("document %d: %v, want one entry %v", i, got, wantAction)
		}
	}
}

// TestParsedOnce: a parsed document is processed once; a second time is a
// mistake of the caller, not a silent no-op.
func TestParsedOnce(t *testing.T) {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	p := inject.ParseText([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: app, image: app}]}\n"), 0)
	if _, entries := in.ProcessParsed(inject.OpInject, p); len(entries) != 1 || entries[0].Action != inject.Injected {
		t.Fatalf("first processing: %v", entries)
	}
	defer func() {
		if recover() == nil {
			t.Error("processing a parsed document twice did not panic")
		}
	}()
	in.ProcessParsed(inject.OpInject, p)
}
