package yamltext

import (
	"bytes"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file turns each kind of edit into a change of the text of a
// block-style document: the lines an insert adds, the span a delete
// removes, the value a fill, a nullify or a set writes. A flow collection
// is left to flow.go.

// change turns one edit into a text change.
func (td *textDoc) change(e Edit) (change, error) {
	switch e.Kind {
	case InsertEdit:
		return td.insert(e)
	case DeleteEdit:
		return td.delete(e)
	case FillEdit:
		return td.fill(e)
	case NullifyEdit:
		return td.nullify(e)
	default:
		return td.set(e)
	}
}

// blockParent checks that a collection can be edited line by line.
func blockParent(n *yaml.Node) error {
	if n.Style&yaml.FlowStyle != 0 || n.Line == 0 || len(n.Content) == 0 {
		return ErrNotSpliceable
	}
	return nil
}

func (td *textDoc) insert(e Edit) (change, error) {
	if e.Parent.Style&yaml.FlowStyle != 0 {
		return td.flowInsert(e)
	}
	if err := blockParent(e.Parent); err != nil {
		return change{}, err
	}
	first := e.Parent.Content[0]
	var at int
	if e.Before != nil {
		if !td.startsLine(e.Before, e.Parent.Kind == yaml.SequenceNode) {
			return change{}, ErrNotSpliceable
		}
		at = td.lineStart(td.commentsAbove(e.Before.Line))
	} else {
		last, err := td.lastChildLine(e.Parent)
		if err != nil {
			return change{}, err
		}
		indent := first.Column - 1
		if e.Parent.Kind == yaml.SequenceNode {
			if indent, err = td.dashColumn(first); err != nil {
				return change{}, err
			}
		}
		td.checkFollows(last, indent)
		at = td.lineStart(last + 1)
	}
	var text string
	var err error
	if e.Parent.Kind == yaml.MappingNode {
		pair := nodes.NewMapping()
		pair.Content = []*yaml.Node{nodes.NewString(e.Key), e.Value}
		text, err = td.renderCached(e, pair, first.Column-1)
	} else {
		dash, derr := td.dashColumn(first)
		if derr != nil {
			return change{}, derr
		}
		text, err = td.renderCached(e, nodes.NewSequence(e.Value), dash)
		if err == nil {
			text = widenItem(text, dash, first.Column-1-dash-2)
		}
	}
	if err != nil {
		return change{}, err
	}
	if at == len(td.src) && td.src[len(td.src)-1] != '\n' {
		// The document's last line has no line end: keep it that way.
		text = td.eol + strings.TrimSuffix(text, td.eol)
	}
	depth := 2 * (first.Column - 1)
	if e.Parent.Kind == yaml.SequenceNode {
		dash, _ := td.dashColumn(first)
		depth = 2*dash + 1
	}
	return change{start: at, end: at, text: text, depth: depth}, nil
}

func (td *textDoc) delete(e Edit) (change, error) {
	if e.Parent.Style&yaml.FlowStyle != 0 {
		return td.flowDelete(e)
	}
	if err := blockParent(e.Parent); err != nil {
		return change{}, err
	}
	isItem := e.Parent.Kind == yaml.SequenceNode
	if !td.startsLine(e.Target, isItem) {
		return change{}, ErrNotSpliceable
	}
	var last int
	var err error
	if isItem {
		dash, derr := td.dashColumn(e.Target)
		if derr != nil {
			return change{}, derr
		}
		last, err = td.lastLine(e.Target, dash)
	} else {
		last, err = td.lastPairLine(e.Target, mapValueOfKey(e.Parent, e.Target))
	}
	if err != nil {
		return change{}, err
	}
	return change{start: td.lineStart(e.Target.Line), end: td.lineStart(last + 1)}, nil
}

// fill writes a collection under a key whose value is empty ("volumes:").
func (td *textDoc) fill(e Edit) (change, error) {
	key := keyOf(e.Parent, e.Target)
	if e.Parent.Style&yaml.FlowStyle != 0 {
		return td.flowFill(e)
	}
	if key == nil || !td.startsLine(key, false) {
		return change{}, ErrNotSpliceable
	}
	colon, err := td.colonAfter(key)
	if err != nil {
		return change{}, err
	}
	// "key: null" and "key: ~": the token (and the space before it) goes,
	// the record keeps it, and uninject writes it back.
	cut := colon
	if e.Target.Value != "" {
		s, err := td.flowNodeSpan(e.Target)
		if err != nil || td.lineOf(s.start) != key.Line {
			return change{}, ErrNotSpliceable
		}
		cut, td.unsure = s.end, true
		if td.src[s.start-1] != ' ' && td.src[s.start-1] != '\t' {
			return change{}, ErrNotSpliceable
		}
	}
	if rest := td.line(key.Line)[cut-td.lineStart(key.Line):]; !isBlankOrComment(rest) || (rest != "" && rest[0] == '#') {
		return change{}, ErrNotSpliceable // something other than "key:" and a comment
	}
	td.detectStyle()
	indent := key.Column - 1
	if e.Value.Kind == yaml.MappingNode || td.wideSeq {
		indent += td.indentStep
	}
	text, err := td.renderCached(e, e.Value, indent)
	if err != nil {
		return change{}, err
	}
	at := td.lineStart(key.Line + 1)
	if at == len(td.src) && td.src[len(td.src)-1] != '\n' {
		text = td.eol + strings.TrimSuffix(text, td.eol)
	}
	if cut != colon {
		// Take out " null" and keep the rest of the line (a comment).
		s, _ := td.flowNodeSpan(e.Target)
		return change{start: s.start - 1, end: at, text: string(td.src[cut:at]) + text, depth: 2*indent + 1}, nil
	}
	return change{start: at, end: at, text: text, depth: 2*indent + 1}, nil
}

// colonAfter returns the offset just past the colon that follows a block
// mapping key.
func (td *textDoc) colonAfter(key *yaml.Node) (int, error) {
	start := td.offset(key.Line, key.Column)
	i := start + len(key.Value)
	if key.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		end, err := td.quotedEnd(key, start)
		if err != nil {
			return 0, err
		}
		i = end
	} else if !bytes.HasPrefix(td.src[start:], []byte(key.Value)) {
		return 0, ErrNotSpliceable
	}
	for i < len(td.src) && (td.src[i] == ' ' || td.src[i] == '\t') {
		i++
	}
	if i >= len(td.src) || td.src[i] != ':' {
		return 0, ErrNotSpliceable
	}
	return i + 1, nil
}

// nullify writes back the null token ("null", "~") of a field that
// injection filled: in place of the emptied flow collection, or after the
// key's colon in block style (the items' lines are removed by their own
// edits).
func (td *textDoc) nullify(e Edit) (change, error) {
	td.unsure = true
	if e.Target.Style&yaml.FlowStyle != 0 {
		s, err := td.flowNodeSpan(e.Target)
		if err != nil {
			return change{}, err
		}
		return change{start: s.start, end: s.end, text: e.Text, covers: true}, nil
	}
	key := keyOf(e.Parent, e.Target)
	if key == nil {
		return change{}, ErrNotSpliceable
	}
	colon, err := td.colonAfter(key)
	if err != nil {
		return change{}, err
	}
	return change{start: colon, end: colon, text: " " + e.Text}, nil
}

func (td *textDoc) set(e Edit) (change, error) {
	n := e.Target
	if n.Kind != yaml.ScalarNode || n.Line == 0 {
		return change{}, ErrNotSpliceable
	}
	start := td.offset(n.Line, n.Column)
	end, err := td.scalarEnd(n, start)
	if err != nil {
		// A plain scalar in a flow collection ends at "," "]" or "}".
		s, ferr := td.flowNodeSpan(n)
		if ferr != nil || s.start != start {
			return change{}, err
		}
		end, td.unsure = s.end, true
	}
	text, err := renderScalar(e.Text, n.Style)
	if err != nil {
		return change{}, err
	}
	return change{start: start, end: end, text: text}, nil
}

func mapValueOfKey(m, key *yaml.Node) *yaml.Node {
	if i := childIndex(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// widenItem moves a rendered item's content extra columns right, after its
// dash, to match items written as "-   name: x".
func widenItem(text string, dash, extra int) string {
	if extra == 0 {
		return text
	}
	pad := strings.Repeat(" ", extra)
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		switch {
		case i == 0:
			lines[i] = l[:dash+1] + pad + l[dash+1:]
		case l != "":
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "")
}

// keyOf is the key of value in the mapping parent, nil when value is not
// one of its values.
func keyOf(parent, value *yaml.Node) *yaml.Node {
	for pair := range slices.Chunk(parent.Content, 2) {
		if pair[1] == value {
			return pair[0]
		}
	}
	return nil
}
