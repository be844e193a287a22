package yamltext_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// TestSpliceCommentsAbove: a key inserted before another goes above the
// comment lines that head it (at its indentation, directly above it), and
// below a comment that is not its own.
func TestSpliceCommentsAbove(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, src, want string }{
		{"its comments", "spec:\n  a: 1\n  # about b\n  # more\n  b: 2\n", "spec:\n  a: 1\n  c: d\n  # about b\n  # more\n  b: 2\n"},
		{"a comment at another indentation", "spec:\n  a: 1\n# top\n  b: 2\n", "spec:\n  a: 1\n# top\n  c: d\n  b: 2\n"},
		{"a blank line between", "spec:\n  a: 1\n  # about a\n\n  b: 2\n", "spec:\n  a: 1\n  # about a\n\n  c: d\n  b: 2\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc, err := yamltext.Decode([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			spec := field(doc.Content[0], "spec")
			out, sure, err := yamltext.Splice([]byte(c.src), []yamltext.Edit{yamltext.Insert(spec, spec.Content[2], "c", str("d"))}, nil)
			if err != nil || string(out) != c.want || !sure {
				t.Errorf("got %q, sure %v, %v; want %q, sure", out, sure, err, c.want)
			}
		})
	}
}

// TestDecodeSolidusLineEnds: JSON's "\/" is read beside other escapes,
// where the parser breaks lines at a lone CR, and where lines end in CR LF.
func TestDecodeSolidusLineEnds(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"{\"a\": \"b\\n\\/c\"}", "{\"x\": 1,\r\"a\": \"b\\/c\"}", "{\"x\": 1,\r\n\"a\": \"b\\/c\"}\r\n", "{\"x\": 1,\r\"y\": 2,\r\n\"a\": \"b\\/c\"}\r"} {
		doc, err := yamltext.Decode([]byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		want := "b/c"
		if strings.Contains(src, `\n`) {
			want = "b\n/c"
		}
		if a := field(doc.Content[0], "a"); a == nil || a.Value != want || a.Kind != yaml.ScalarNode {
			t.Errorf("%q: a = %+v, want %q", src, a, want)
		}
	}
}

// TestDecodeSolidusOtherStrings: in a document that holds "\/", the
// strings without it keep their other escapes.
func TestDecodeSolidusOtherStrings(t *testing.T) {
	t.Parallel()
	doc, err := yamltext.Decode([]byte(`{"a": "b\n\"", "c": "d\/e"}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, c := field(doc.Content[0], "a").Value, field(doc.Content[0], "c").Value; a != "b\n\"" || c != "d/e" {
		t.Errorf("a = %q, c = %q; want %q, %q", a, c, "b\n\"", "d/e")
	}
}
