package yamltext

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file renders nodes in flow style: JSON in a JSON document, YAML
// flow elsewhere, laid out as the collection they go into (flow.go).

// render writes n in the layout's style; multi-line nested lines are
// indented from indent.
func (l flowLayout) render(b *strings.Builder, n *yaml.Node, indent int) error {
	switch n.Kind {
	case yaml.ScalarNode:
		b.WriteString(l.scalar(n, false))
		return nil
	case yaml.MappingNode, yaml.SequenceNode:
	default:
		return ErrNotSpliceable
	}
	openB, closeB, step := "[", "]", 1
	if n.Kind == yaml.MappingNode {
		openB, closeB, step = "{", "}", 2
	}
	b.WriteString(openB)
	if len(n.Content) == 0 {
		b.WriteString(closeB)
		return nil
	}
	sep := strings.TrimRight(l.sep, " \t\r\n")
	if !l.multiline {
		sep = l.sep
	}
	inner := indent + l.step
	for i := 0; i < len(n.Content); i += step {
		if i > 0 {
			b.WriteString(sep)
		}
		if l.multiline {
			b.WriteString(l.eol())
			b.WriteString(strings.Repeat(" ", inner))
		}
		child := n.Content[i]
		if n.Kind == yaml.MappingNode {
			b.WriteString(l.scalar(child, true))
			b.WriteString(l.colon)
			child = n.Content[i+1]
		}
		if err := l.render(b, child, inner); err != nil {
			return err
		}
	}
	if l.multiline {
		b.WriteString(l.eol())
		b.WriteString(strings.Repeat(" ", indent))
	}
	b.WriteString(closeB)
	return nil
}

// eol is the line end the separator uses.
func (l flowLayout) eol() string {
	if strings.Contains(l.sep, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// scalar writes a scalar: as JSON in a JSON document; elsewhere plain when
// YAML reads it back as the same string, quoted when not.
func (l flowLayout) scalar(n *yaml.Node, key bool) string {
	tag := n.ShortTag()
	if l.json {
		if !key && tag != "!!str" {
			if json.Valid([]byte(n.Value)) && tag != "!!null" {
				return n.Value
			}
			if tag == "!!null" {
				return "null"
			}
		}
		return jsonQuote(n.Value)
	}
	if tag != "!!str" && !key {
		return n.Value
	}
	if plainFlowSafe(n.Value) {
		return n.Value
	}
	if !strings.ContainsAny(n.Value, "\n\r\t") && isPrintable(n.Value) {
		return "'" + strings.ReplaceAll(n.Value, "'", "''") + "'"
	}
	return jsonQuote(n.Value)
}

func jsonQuote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// plainFlowString is compiled on first use: most runs render no flow
// collection.
var plainFlowString = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_/.-][A-Za-z0-9_./-]*$`) })

// plainFlowSafe reports whether s can be written unquoted in a flow
// collection and read back as the same string.
func plainFlowSafe(s string) bool {
	if !plainFlowString().MatchString(s) {
		return false
	}
	var v any
	if err := yaml.Unmarshal([]byte("["+s+"]"), &v); err != nil {
		return false
	}
	list, ok := v.([]any)
	return ok && len(list) == 1 && list[0] == s
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			return false
		}
	}
	return true
}
