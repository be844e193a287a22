package manifest

import (
	"bytes"
	"strings"
	"testing"
)

func TestProcessKeepsBytes(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"empty":                  "",
		"one document":           "a: 1\n",
		"no final newline":       "a: 1",
		"leading separator":      "---\na: 1\n",
		"comments between":       "a: 1\n# about b\n--- # b\nb: 2\n...\n",
		"crlf":                   "a: 1\r\n---\r\nb: 2\r\n",
		"only comments":          "# license\n",
		"separator with content": "--- a: 1\n",
		"long line":              "a: " + strings.Repeat("x", 200<<10) + "\n---\nb: 2\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			var seen []int
			err := Process(strings.NewReader(in), &out, func(i int, doc []byte) []byte {
				seen = append(seen, i)
				return doc
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != in {
				t.Errorf("output differs from input:\n%q\n%q", out.String(), in)
			}
			for i, v := range seen {
				if v != i {
					t.Errorf("document indices %v are not 0..n-1", seen)
				}
			}
		})
	}
}

func TestProcessCountsOnlyDocumentsWithContent(t *testing.T) {
	t.Parallel()
	in := "# header\n---\na: 1\n---\n# nothing\n---\nb: 2\n"
	var docs []string
	var out bytes.Buffer
	if err := Process(strings.NewReader(in), &out, func(i int, doc []byte) []byte {
		docs = append(docs, string(doc))
		return bytes.ToUpper(doc)
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a: 1\n", "b: 2\n"}; strings.Join(docs, "|") != strings.Join(want, "|") {
		t.Errorf("documents = %q, want %q", docs, want)
	}
	if want := "# header\n---\nA: 1\n---\n# nothing\n---\nB: 2\n"; out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
}
