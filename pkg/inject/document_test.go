package inject_test

import (
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
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
