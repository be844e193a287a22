package manifest

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestDocumentLines: each document knows the line of the stream it starts
// on, whatever separators, comments and line ends come before it.
func TestDocumentLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		lines   []int // Document.Line of each document
		content []int // Document.ContentLine of each document
	}{
		{"one document", "a: 1\n", []int{1}, []int{1}},
		{"leading separator", "---\na: 1\n", []int{2}, []int{2}},
		{"comments above", "# license\n\n---\n# about a\na: 1\n---\nb: 2\n", []int{4, 7}, []int{5, 7}},
		{"comment-only document between", "a: 1\n---\n# nothing\n---\nb: 2\n", []int{1, 5}, []int{1, 5}},
		{"crlf", "a: 1\r\n---\r\nb: 2\r\n", []int{1, 3}, []int{1, 3}},
		{"separator with comment", "a: 1\n--- # b\n\nb: 2\n", []int{1, 3}, []int{1, 4}},
		{"long line", "a: " + strings.Repeat("x", 200<<10) + "\n---\nb: 2\n", []int{1, 3}, []int{1, 3}},
		{"JSON values one per line", "{\"a\": 1}\n{\"b\": 2}\n\n{\"c\": 3}\n", []int{1, 2, 4}, []int{1, 2, 4}},
		{"JSON values on one line", "{\"a\": 1}{\"b\": 2} {\"c\": 3}\n", []int{1, 1, 1}, []int{1, 1, 1}},
		{"indented JSON values", "{\n  \"a\": 1\n}\n{\n  \"b\": 2\n}\n---\n{\"c\": 3}\n", []int{1, 4, 8}, []int{1, 4, 8}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var lines, content []int
			err := ProcessDocuments(strings.NewReader(c.in), io.Discard, func(d Document) []byte {
				lines = append(lines, d.Line)
				content = append(content, d.ContentLine())
				return d.Text
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lines, c.lines) || !slices.Equal(content, c.content) {
				t.Errorf("lines %v, content lines %v; want %v and %v", lines, content, c.lines, c.content)
			}
		})
	}
}

// TestSyntaxError: a document that is not YAML is located at the line and
// column of the stream where the problem is, not where its enclosing
// collection began.
func TestSyntaxError(t *testing.T) {
	t.Parallel()
	const first = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n" // document 2 starts on line 6
	cases := []struct {
		name, doc string
		want      string // Position() + ": " + Error()
	}{
		{"flow collection not closed", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {a: [}\n",
			"line 10, column 16: did not find expected node content"},
		{"indented too far", "apiVersion: v1\nkind: X\nmetadata:\n  name: web\n   labels: x\n",
			"line 10, column 10: mapping values are not allowed in this context"},
		{"quote not closed", "a: b\nc: \"unterminated\nd: e\n",
			"line 9, column 1: found unexpected end of stream (while scanning a quoted scalar that began at line 7, column 4)"},
		{"tab indent", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n",
			"line 9, column 1: found character that cannot start any token"},
		{"list item in a mapping", "a:\n  - b\n  c: d\n",
			"line 8, column 3: did not find expected '-' indicator (while parsing a block collection that began at line 7, column 3)"},
		{"unknown alias", "a: *nope\n", "line 6, column 4: unknown anchor 'nope' referenced"},
		{"second document after the end marker", "a: 1\n...\nb: 2\n",
			`line 8, column 1: a second document begins here without a "---" line before it`},
		{"JSON value followed by a comment and another value", "{\"a\": 1}\n# b\n{\"b\": 2}\n",
			"line 8, column 1: did not find expected <document start>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			err := ProcessDocuments(strings.NewReader(first+c.doc), io.Discard, func(d Document) []byte {
				if e := d.SyntaxError(); e != nil {
					got = append(got, e.Position()+": "+e.Error())
				}
				return d.Text
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("got %q, want [%q]", got, c.want)
			}
		})
	}
}
