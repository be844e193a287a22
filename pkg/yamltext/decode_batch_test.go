package yamltext

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// batchCases are runs of documents where one stream could read a text
// otherwise than Decode: each must come out as Decode gives it.
var batchCases = [][]string{
	{"a: 1\n", "b: 2\n", "c: [3]\n"},
	// An alias to an anchor of an earlier text: one stream resolves it,
	// Decode refuses it.
	{"a: &x 1\n", "b: *x\n", "c: 3\n"},
	{"a: &x 1\nb: *x\n", "c: &x 2\nd: *x\n"},
	// An alias before its own text's anchor of the same name.
	{"a: &x 1\n", "b: *x\nc: &x 2\n"},
	// A syntax error in the middle: the texts after it are read alone.
	{"a: 1\n", "b: [\n", "c: 3\n", "d: 4\n"},
	{"a: 1\n", "b: 2\n  c: 3\n", "e: 5\n"},
	// Texts that are more than one document, or would be in a stream.
	{"a: 1\n", "b: 2\n...\nc: 3\n", "d: 4\n"},
	{"a: 1\n", "--- b: 2\n", "c: 3\n"},
	{"a: 1\n", "%YAML 1.2\n", "c: 3\n"},
	{"a: 1\n", "b: 2\n---\nc: 3\n", "d: 4\n"},
	// A block scalar that keeps its line ends, with and without a last
	// one; comments at the end and at the start.
	{"a: |+\n  x\n\n\n", "b: |+\n  y", "c: 1\n"},
	{"# head\n\na: 1 # line\n# foot\n", "# only a head\nb: 2\n\n# foot\n\n", "c: 3\n"},
	// Line ends: CR LF, lone CR, and the breaks only the parser counts.
	{"a: 1\r\nb: 2\r\n", "c: 3\rd: 4\r\n", "e: 5\n"},
	{"# head\r\na: 1\r\n", "b: 2\r\n# c\r\nc: 3\r\n", "d: 4 # line\r\n"},
	{"a: 1\n", "b: \"x\u2028y\"\nc: 2\n", "d: 3\n"},
	// Empty documents, nulls, scalars and sequences at the top.
	{"# nothing\n", "~\n", "null\n", "\n", "plain\n", "- 1\n- 2\n"},
	// A byte order mark, JSON with its "\/" escape, tags and anchors at
	// the top.
	{"\ufeffa: 1\n", `{"a": "x\/y"}` + "\n", "!!map {b: 2}\n", "&top\nc: 3\n", "--- &top\nd: 4\n"},
	{"a: 1\n", "? complex\n: key\n", "[1, 2]\n", "{a: 1}\n"},
}

// TestDecodeBatchAsDecode: every text of every run comes out of
// DecodeBatch as Decode gives it: the same tree, every field of every
// node (positions included), or the same error.
func TestDecodeBatchAsDecode(t *testing.T) {
	runs := batchCases
	files, err := filepath.Glob("../inject/testdata/golden/*/input.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("the golden inputs: %v (%d)", err, len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, splitStream(string(src)))
	}
	for _, run := range runs {
		checkBatch(t, run)
	}
}

// TestDecodeBatchAlone: DecodeBatch parses alone only the texts that one
// stream could read otherwise, and those next to a failure; the rest
// share one parser.
func TestDecodeBatchAlone(t *testing.T) {
	for _, c := range []struct {
		texts []string
		alone []int
	}{
		{[]string{"a: 1\n", "# head\nb: 2 # line\n", "- c\n", "d: |\n  x\n\n", "{\"e\": 5}\n"}, nil},
		{[]string{"a: &x 1\n", "b: *x\n", "c: 3\n"}, []int{1}},
		{[]string{"a: &x 1\nb: *x\n", "c: &x 2\nd: *x\n"}, nil},
		{[]string{"a: 1\n", "b: 2\n", "c: [\n", "d: 4\n"}, []int{1, 2, 3}},
		{[]string{"a: 1\n", "b: 2\n...\n", "c: 3\n"}, []int{1}},
		{[]string{"a: 1\n", "b: 2\n", "c: 3"}, []int{2}},
		{[]string{"a: 1\n", "b: 2\n# foot\n", "c: 3\n"}, []int{1}},
		{[]string{"a: 1\n", "b: 2\n"}, nil},
		// CR LF is one line break, and lone CR another; a comment ended
		// by CR is placed otherwise in a stream, so its text is alone.
		{[]string{"a: 1\r\nb: 2\r\n", "c: 3\rd: 4\r\n", "# head\r\ne: 5\r\n", "f: 6 # line\r\n"}, []int{2}},
		{[]string{"a: 1\n", "b: 2"}, []int{0, 1}}, // one text left: nothing to share
	} {
		checkParsedAlone(t, c.texts, c.alone)
		checkBatch(t, c.texts)
	}
}

// FuzzDecodeBatch: texts cut from any input at "---" lines come out of
// DecodeBatch as Decode gives them.
func FuzzDecodeBatch(f *testing.F) {
	for _, run := range batchCases {
		f.Add(strings.Join(run, "---\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkBatch(t, splitStream(s))
	})
}

func checkBatch(t *testing.T, texts []string) {
	t.Helper()
	srcs := make([][]byte, len(texts))
	for i, text := range texts {
		srcs[i] = []byte(text)
	}
	nodes, errs := DecodeBatch(srcs)
	if len(nodes) != len(texts) || len(errs) != len(texts) {
		t.Fatalf("%d texts, %d nodes, %d errors", len(texts), len(nodes), len(errs))
	}
	for i, src := range srcs {
		want, wantErr := Decode(src)
		if fmt.Sprint(errs[i]) != fmt.Sprint(wantErr) {
			t.Errorf("text %d of %q: error %v, Decode's %v", i, texts, errs[i], wantErr)
			continue
		}
		if !reflect.DeepEqual(nodes[i], want) {
			t.Errorf("text %d of %q:\n%s\nDecode:\n%s", i, texts, dumpTree(nodes[i]), dumpTree(want))
		}
	}
}

// splitStream cuts s at "---" lines, as a stream's documents are cut.
func splitStream(s string) []string {
	var texts []string
	var text strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.TrimRight(line, "\r\n") == "---" {
			texts = append(texts, text.String())
			text.Reset()
			continue
		}
		text.WriteString(line)
	}
	return append(texts, text.String())
}

func dumpTree(n *yaml.Node) string {
	if n == nil {
		return "<nil>\n"
	}
	var b strings.Builder
	var walk func(n *yaml.Node, indent string)
	walk = func(n *yaml.Node, indent string) {
		fmt.Fprintf(&b, "%s%d:%d kind %d style %d tag %q value %q anchor %q comments %q %q %q\n", indent, n.Line, n.Column, n.Kind, n.Style, n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment)
		for _, c := range n.Content {
			walk(c, indent+"  ")
		}
	}
	walk(n, "")
	return b.String()
}
