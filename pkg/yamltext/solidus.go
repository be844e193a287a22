package yamltext

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// JSON may escape "/" as "\/" (PHP's json_encode always does); YAML 1.2
// has the escape too, but the YAML parser does not know it. A JSON
// document holding one is parsed as a copy in which each "\/" is "\a",
// an escape the parser knows, and each string whose text holds "\/" is
// then read from the original text with encoding/json. Every byte keeps
// its offset, so positions, and splicing, are those of the original text.

// jsonWithoutSolidus returns src with every "\/" replaced by "\a", and
// whether it replaced any: only in text that is JSON, where a backslash
// always begins an escape in a string.
func jsonWithoutSolidus(src []byte) ([]byte, bool) {
	if !bytes.Contains(src, []byte(`\/`)) || !json.Valid(src) {
		return src, false
	}
	return replaceEscape(src, '/', "\\a"), true
}

// replaceEscape returns JSON text with the escape "\"+from written as to.
func replaceEscape(src []byte, from byte, to string) []byte {
	out := make([]byte, 0, len(src))
	for i := 0; i < len(src); i++ {
		if src[i] != '\\' || i+1 == len(src) {
			out = append(out, src[i])
			continue
		}
		if src[i+1] == from {
			out = append(out, to...)
		} else {
			out = append(out, src[i], src[i+1])
		}
		i++
	}
	return out
}

// restoreSolidus reads each string of the tree whose text in src holds
// "\/" from that text again, with encoding/json. It checks that the parser
// read the same string with the stand-in, so that a position that does not
// match the text is an error rather than a wrong value.
func restoreSolidus(n *yaml.Node, src []byte) error {
	// The parser also breaks lines at a lone CR: so do the positions.
	lines := bytes.Clone(src)
	for i, c := range lines {
		if c == '\r' && (i+1 == len(lines) || lines[i+1] != '\n') {
			lines[i] = '\n'
		}
	}
	return restoreStrings(n, newTextDoc(lines), src)
}

func restoreStrings(n *yaml.Node, td *textDoc, src []byte) error {
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && n.Line > 0 {
		start := td.offset(n.Line, n.Column)
		end, err := td.quotedEnd(n, start)
		if err == nil && bytes.Contains(src[start:end], []byte(`\/`)) {
			var value, standIn string
			err = json.Unmarshal(src[start:end], &value)
			if err == nil {
				err = json.Unmarshal(replaceEscape(src[start:end], '/', `\u0007`), &standIn)
			}
			if err == nil && standIn != n.Value {
				err = fmt.Errorf("the string does not match its text")
			}
			if err != nil {
				return fmt.Errorf("line %d: reading the \\/ escape: %w", n.Line, err)
			}
			n.Value = value
		}
	}
	for _, c := range n.Content {
		if err := restoreStrings(c, td, src); err != nil {
			return err
		}
	}
	return nil
}
