package yamltext

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file finds where nodes begin and end in the text. The parser
// reports where a node starts; where a block node ends follows from YAML's
// indentation rules: its lines are the ones indented deeper than the
// construct that holds it.

// startsLine reports whether n is the first thing on its line (after the
// item's dash, for items), so that whole lines can be inserted before it or
// removed.
func (td *textDoc) startsLine(n *yaml.Node, isItem bool) bool {
	if n.Line == 0 {
		return false
	}
	prefix := string(td.src[td.lineStart(n.Line):td.offset(n.Line, n.Column)])
	if isItem {
		prefix = strings.TrimRight(prefix, " ")
		if !strings.HasSuffix(prefix, "-") {
			return false
		}
		prefix = prefix[:len(prefix)-1]
	}
	return strings.TrimLeft(prefix, " ") == ""
}

// commentsAbove returns the first line of the comment lines directly above
// line n that share its indentation (they belong to it), or n.
func (td *textDoc) commentsAbove(n int) int {
	indent := indentOf(td.line(n))
	for n > 1 {
		prev := td.line(n - 1)
		if t := strings.TrimSpace(prev); t == "" || t[0] != '#' || indentOf(prev) != indent {
			break
		}
		n--
	}
	return n
}

// dashColumn returns the 0-based column of an item's dash.
func (td *textDoc) dashColumn(item *yaml.Node) (int, error) {
	if !td.startsLine(item, true) {
		return 0, ErrNotSpliceable
	}
	return strings.Index(td.line(item.Line), "-"), nil
}

// lastChildLine returns the last line of a block collection's last child.
func (td *textDoc) lastChildLine(n *yaml.Node) (int, error) {
	if n.Kind == yaml.MappingNode {
		k := len(n.Content) - 2
		return td.lastPairLine(n.Content[k], n.Content[k+1])
	}
	last := n.Content[len(n.Content)-1]
	dash, err := td.dashColumn(last)
	if err != nil {
		return 0, err
	}
	return td.lastLine(last, dash)
}

// lastPairLine returns the last line of a key and its value.
func (td *textDoc) lastPairLine(key, value *yaml.Node) (int, error) {
	if value == nil || (nodes.IsNull(value) && value.Value == "") || value.Line == 0 {
		// An empty value may still have a tag or anchor on the lines below.
		return td.continuation(key.Line, key.Column-1, false), nil
	}
	last, err := td.lastLine(value, key.Column-1)
	if last < key.Line {
		last = key.Line
	}
	return last, err
}

// lastLine returns the last line of node n, which sits in a construct
// indented by indent columns.
func (td *textDoc) lastLine(n *yaml.Node, indent int) (int, error) {
	switch {
	case n.Line == 0:
		return 0, ErrNotSpliceable
	case n.Kind == yaml.AliasNode:
		return n.Line, nil
	case n.Kind != yaml.ScalarNode && n.Style&yaml.FlowStyle != 0:
		end, err := td.flowEndLine(n)
		td.unsure = td.unsure || end != n.Line // a flow collection spanning lines
		return end, err
	case n.Kind == yaml.MappingNode:
		last := n.Line
		for pair := range slices.Chunk(n.Content, 2) {
			l, err := td.lastPairLine(pair[0], pair[1])
			if err != nil {
				return 0, err
			}
			last = max(last, l)
		}
		return last, nil
	case n.Kind == yaml.SequenceNode:
		last := n.Line
		for _, item := range n.Content {
			dash, err := td.dashColumn(item)
			if err != nil {
				return 0, err
			}
			l, err := td.lastLine(item, dash)
			if err != nil {
				return 0, err
			}
			last = max(last, l)
		}
		return last, nil
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		td.unsure = true
		return td.continuation(n.Line, indent, true), nil
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		end, err := td.quotedEnd(n, td.offset(n.Line, n.Column))
		if err != nil {
			return 0, err
		}
		line := bytes.Count(td.src[:end], []byte("\n")) + 1
		td.unsure = td.unsure || line != n.Line
		return line, nil
	default:
		return td.continuation(n.Line, indent, false), nil
	}
}

// continuation returns the last line, from line on, of lines indented deeper
// than indent: a block scalar's content (where comment-like lines are
// content too), or a plain scalar's continuation lines.
func (td *textDoc) continuation(line, indent int, block bool) int {
	last := line
	for n := line + 1; n <= len(td.lineStarts); n++ {
		text := td.line(n)
		if strings.TrimSpace(text) == "" {
			continue
		}
		if indentOf(text) <= indent || (!block && isBlankOrComment(text)) {
			break
		}
		last = n
		td.unsure = true
	}
	return last
}

// checkFollows marks the splice unsure unless the first content line after
// line last is indented no deeper than indent: otherwise the node did not
// end where the rules said.
func (td *textDoc) checkFollows(last, indent int) {
	for n := last + 1; n <= len(td.lineStarts); n++ {
		if text := td.line(n); !isBlankOrComment(text) {
			if indentOf(text) > indent {
				td.unsure = true
			}
			return
		}
	}
}

// flowEndLine finds the line of the bracket closing a flow collection.
func (td *textDoc) flowEndLine(n *yaml.Node) (int, error) {
	src := td.src
	i := td.offset(n.Line, n.Column)
	for i < len(src) && src[i] != '[' && src[i] != '{' && src[i] != '\n' {
		i++ // skip an anchor or tag before the bracket
	}
	end, err := flowEnd(src, i)
	if err != nil {
		return 0, err
	}
	return bytes.Count(src[:end-1], []byte("\n")) + 1, nil
}

// quotedEnd returns the offset just past a quoted scalar starting at start.
func (td *textDoc) quotedEnd(n *yaml.Node, start int) (int, error) {
	if start >= len(td.src) || (td.src[start] != '"' && td.src[start] != '\'') {
		return 0, ErrNotSpliceable
	}
	return quoteEnd(td.src, start)
}

// quoteEnd returns the offset just past the quoted string opening at i.
func quoteEnd(src []byte, i int) (int, error) {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch {
		case q == '"' && src[j] == '\\':
			j++
		case src[j] == q && q == '\'' && j+1 < len(src) && src[j+1] == '\'':
			j++
		case src[j] == q:
			return j + 1, nil
		}
	}
	return 0, ErrNotSpliceable
}

// scalarEnd returns the offset just past a one-line scalar's text.
func (td *textDoc) scalarEnd(n *yaml.Node, start int) (int, error) {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		end, err := td.quotedEnd(n, start)
		if err != nil || bytes.IndexByte(td.src[start:end], '\n') >= 0 {
			return 0, ErrNotSpliceable
		}
		return end, nil
	}
	if n.Style != 0 && n.Style != yaml.TaggedStyle {
		return 0, ErrNotSpliceable
	}
	rest := td.src[start:td.lineStart(n.Line+1)]
	text := strings.TrimRight(string(rest), "\r\n")
	if i := strings.Index(text, " #"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimRight(text, " \t")
	if text != n.Value {
		return 0, ErrNotSpliceable // multi-line, tagged or otherwise unusual
	}
	return start + len(text), nil
}

// renderScalar writes a string in the given quoting style, so a changed
// value keeps the look of the one it replaces.
func renderScalar(value string, style yaml.Style) (string, error) {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		return strconv.Quote(value), nil
	case style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(value, "\n\r"):
		return "'" + strings.ReplaceAll(value, "'", "''") + "'", nil
	}
	out, err := yaml.Marshal(nodes.NewString(value))
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(s, "\n") {
		return "", ErrNotSpliceable
	}
	return s, nil
}

// render writes node n as block YAML with every line indented by indent,
// following the document's indentation step and sequence style.
func (td *textDoc) render(n *yaml.Node, indent int) (string, error) {
	td.detectStyle()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(td.indentStep)
	if td.wideSeq {
		enc.DefaultSeqIndent()
	} else {
		enc.CompactSeqIndent()
	}
	if err := enc.Encode(n); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	// The encoder's output must read back as the node: some indentation
	// steps make it write sequences it cannot read. (Callers cache the text,
	// so this costs one parse per template item and style.)
	if back, err := Decode(buf.Bytes()); err != nil || back == nil || !Equal(back.Content[0], n) {
		return "", ErrNotSpliceable
	}
	pad := strings.Repeat(" ", indent)
	lines := strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var out strings.Builder
	for _, l := range lines {
		out.WriteString(pad)
		out.WriteString(strings.TrimSuffix(l, "\n"))
		out.WriteString(td.eol)
	}
	return out.String(), nil
}

// detectStyle learns the author's indentation step and whether sequences
// under a key are indented ("wide") from the first examples in the text.
func (td *textDoc) detectStyle() {
	if td.styled {
		return
	}
	td.styled = true
	step, seqDiff := 0, -1 // seqDiff: how much deeper than its key a sequence's "-" is (-1: unseen)
	for n := 1; n < len(td.lineStarts) && (step == 0 || seqDiff < 0); n++ {
		text := strings.TrimRight(td.line(n), " ")
		if !strings.HasSuffix(text, ":") || isBlankOrComment(text) {
			continue
		}
		keyIndent := indentOf(text)
		if strings.HasPrefix(strings.TrimLeft(text, " "), "- ") {
			keyIndent += 2
		}
		next := n + 1
		for next <= len(td.lineStarts) && isBlankOrComment(td.line(next)) {
			next++
		}
		nextText := td.line(next)
		diff := indentOf(nextText) - keyIndent
		switch {
		case strings.HasPrefix(strings.TrimLeft(nextText, " "), "-"):
			if seqDiff < 0 && diff >= 0 {
				seqDiff = diff
			}
		case diff > 0 && step == 0 && strings.Contains(nextText, ":"):
			step = diff
		}
	}
	if step >= 2 && step <= 8 {
		td.indentStep = step
	}
	// The encoder's compact sequences sit step-2 deeper than their key
	// (0 for a step of 2, 1 for 3), its wide ones step deeper: a sequence
	// is wide only when it is deeper than compact would put it, so that
	// text written in the compact style of a step of 3 reads back as
	// compact and a second injection renders the way the first did.
	td.wideSeq = seqDiff > max(0, td.indentStep-2)
}
