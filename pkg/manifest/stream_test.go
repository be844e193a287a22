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
		"JSON values":            "{\"a\":1}\n{\"b\":[1,\"}\"]}\r\n\n  {\"c\":{}}{\"d\":2} \n",
		"JSON value, no newline": "{\"a\":1}{\"b\":2}",
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

// TestProcessSplitsJSONValues: JSON values written one after the other
// without a separator (jq's output) are documents of their own, each with
// the blank space that follows it; text that YAML could read as one
// document, or whose first value is not JSON, is one document.
func TestProcessSplitsJSONValues(t *testing.T) {
	t.Parallel()
	const a, b = `{"kind":"Pod","metadata":{"name":"a"}}`, `{"kind":"Pod","metadata":{"name":"b"}}`
	cases := []struct {
		name, in string
		want     []string
	}{
		{"one per line", a + "\n" + b + "\n", []string{a + "\n", b + "\n"}},
		{"without space", a + b, []string{a, b}},
		{"indented", "{\n  \"a\": \"{[\\\"\"\n}\n\n[\n  1\n]\n", []string{"{\n  \"a\": \"{[\\\"\"\n}\n\n", "[\n  1\n]\n"}},
		{"comment above the first", "# jq output\n" + a + "\n" + b, []string{"# jq output\n" + a + "\n", b}},
		{"between separators", a + "\n---\n" + a + "\n" + b + "\n---\nc: 1\n", []string{a + "\n", a + "\n", b + "\n", "c: 1\n"}},
		{"a broken value after a valid one", a + "\n{\"b\":\n", []string{a + "\n", "{\"b\":\n"}},
		{"YAML flow mapping", "{a: 1}\n{b: 2}\n", []string{"{a: 1}\n{b: 2}\n"}},
		{"comment after the value", a + "\n# b\n" + b + "\n", []string{a + "\n# b\n" + b + "\n"}},
		{"key after the value", a + ": x\n", []string{a + ": x\n"}},
		{"scalars", "\"a\"\n\"b\"\n", []string{"\"a\"\n\"b\"\n"}},
		{"block YAML", "a: {\"b\": 1}\nc: [1]\n", []string{"a: {\"b\": 1}\nc: [1]\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var docs []string
			var out bytes.Buffer
			if err := Process(strings.NewReader(c.in), &out, func(_ int, doc []byte) []byte {
				docs = append(docs, string(doc))
				return doc
			}); err != nil {
				t.Fatal(err)
			}
			if strings.Join(docs, "|") != strings.Join(c.want, "|") {
				t.Errorf("documents = %q, want %q", docs, c.want)
			}
			if out.String() != c.in {
				t.Errorf("output differs from input:\n%q\n%q", out.String(), c.in)
			}
		})
	}
}
