package yamltext

import (
	"fmt"
	"testing"
)

// TestDecodeBatchAloneBytes: a text the stream cannot read as Decode does
// (a first byte past ASCII, a NUL anywhere, a comment at the margin above
// indented content) is parsed alone, and only it: the texts around it
// share one parser. A comment indented as the content below it keeps its
// text in the stream.
func TestDecodeBatchAloneBytes(t *testing.T) {
	for _, c := range []struct {
		texts []string
		alone []int
		err   string // of the text parsed alone, "" for none
	}{
		{[]string{"a: 1\n", "b: 2\n", "\x80c: 3\n"}, []int{2}, "yaml: invalid leading UTF-8 octet"},
		{[]string{"a: 1\n", "b: 2\n", "\x00\n"}, []int{2}, "yaml: control characters are not allowed"},
		{[]string{"a: 1\n", "# c\n  b: 2\n", "c: 3\n"}, []int{1}, ""},
		{[]string{"a: 1\n", "a:\n  # c\n  b: 1\n", "c: 3\n"}, nil, ""},
	} {
		srcs := checkParsedAlone(t, c.texts, c.alone)
		_, errs := DecodeBatch(srcs)
		for i, err := range errs {
			want := ""
			if len(c.alone) > 0 && i == c.alone[len(c.alone)-1] {
				want = c.err
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("%q: text %d: error %v, want %q", c.texts, i, err, want)
			}
		}
		checkBatch(t, c.texts)
	}
}

// checkParsedAlone checks that the stream parses alone exactly the texts
// at the indices alone, and returns the texts as DecodeBatch takes them.
func checkParsedAlone(t *testing.T, texts []string, alone []int) [][]byte {
	t.Helper()
	srcs := make([][]byte, len(texts))
	for i, text := range texts {
		srcs[i] = []byte(text)
	}
	_, parsedAlone := decodeStream(srcs)
	var got []int
	for i, a := range parsedAlone {
		if a {
			got = append(got, i)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(alone) {
		t.Errorf("%q: parsed alone %v, want %v", texts, got, alone)
	}
	return srcs
}
