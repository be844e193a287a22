package yamltext

import (
	"bytes"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file splices flow collections that are empty or null before
// injection: the items go in, and what was there comes back on uninject.

// EmptyInner returns a reader of what is between the brackets of the empty
// collections of src, the text of one document, that inserted items
// replace (see emptyInner); a caller records it, and puts it back as the
// Text of the deletes that empty the collection again. src's lines are
// read on the first call.
func EmptyInner(src []byte) func(n *yaml.Node) string {
	var td *textDoc
	return func(n *yaml.Node) string {
		if td == nil {
			td = newTextDoc(src)
		}
		return td.emptyInner(n)
	}
}

// emptyInner returns what is between the brackets of the empty flow
// collection n when items inserted into it replace that: blank space in a
// multi-line JSON document, where the items and the closing bracket are
// laid out as encoding/json lays them out. Elsewhere the items go right
// after the opening bracket and what was there stays, so "" is returned.
func (td *textDoc) emptyInner(n *yaml.Node) string {
	if n.Style&yaml.FlowStyle == 0 || len(n.Content) > 0 || !td.isJSON() || !td.multilineJSON() {
		return ""
	}
	open, close, err := td.flowBounds(n)
	if err != nil {
		return ""
	}
	return blankOnly(td.src[open+1 : close])
}

// blankOnly returns text when it is only blank space (line ends
// included), "" when not.
func blankOnly(text []byte) string {
	if len(bytes.Trim(text, " \t\r\n")) > 0 {
		return ""
	}
	return string(text)
}

// flowFill replaces an explicit null value ("volumes": null) with the
// rendered collection.
func (td *textDoc) flowFill(e Edit) (change, error) {
	td.unsure = true
	s, err := td.flowNodeSpan(e.Target)
	if err != nil || s.start == s.end {
		return change{}, ErrNotSpliceable
	}
	open := s.start // the collection's indentation follows the key's line
	l, err := td.layout(&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}, open, open, nil)
	if err != nil {
		return change{}, err
	}
	if l.multiline {
		l.indent = indentOf(td.line(td.lineOf(open)))
	}
	var b strings.Builder
	if err := l.render(&b, e.Value, l.indent); err != nil {
		return change{}, err
	}
	return change{start: s.start, end: s.end, text: b.String()}, nil
}
