package inject

import (
	"bytes"
	"testing"
)

// TestReformatKeepsJSON: a document re-serialized whole (when the text
// could not be edited in place) stays in its language and layout: JSON
// compact or indented as it came, YAML with its line ends.
func TestReformatKeepsJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"compact JSON", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}` + "\n",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}` + "\n"},
		{"indented JSON", "{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\"\n}\n",
			"{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\"\n}\n"},
		{"YAML with CRLF", "kind: ConfigMap\r\napiVersion: v1\r\n", "kind: ConfigMap\r\napiVersion: v1\r\n"},
	} {
		d, e := parseDocument([]byte(c.in), 0)
		if e != nil || d == nil {
			t.Fatalf("%s: %v", c.name, e)
		}
		d.reformat()
		if d.err != nil || !bytes.Equal(d.text, []byte(c.want)) || !d.reformatted {
			t.Errorf("%s: %q (%v), want %q", c.name, d.text, d.err, c.want)
		}
	}
}
