package yamltext

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrNotSpliceable means an edit cannot be applied to the text in place
// (flow-style collections, aliases, multi-line scalars); the document is
// then re-serialized instead.
var ErrNotSpliceable = errors.New("edit cannot be applied in place")

// textDoc is the original text of one document with what splicing needs:
// line offsets and the author's indentation habits.
type textDoc struct {
	src        []byte
	lineStarts []int // byte offset of each line; line n (1-based) starts at lineStarts[n-1]
	eol        string
	indentStep int
	wideSeq    bool
	styled     bool // indentStep and wideSeq are detected
	renders    *RenderCache
	unsure     bool // a position depended on more than the plain rules
	json       bool // the document is JSON (see isJSON)
	jsonKnown  bool
	// flowDeleted holds, per flow collection, the indexes of the children
	// being removed, so that runs of them go with their separators at once.
	flowDeleted map[*yaml.Node]map[int]bool
	// flowInserted counts the inserts made so far into each empty flow
	// collection.
	flowInserted map[*yaml.Node]int
	// extra are changes an edit needs besides its own (the closing line of
	// a multi-line collection that was empty).
	extra []change
}

// change replaces src[start:end] with text.
type change struct {
	start, end int
	text       string
	// depth orders insertions at one offset: twice the indentation of the
	// inserted text, plus one for a sequence item (at equal indentation an
	// item ends its list before a new key of the enclosing mapping).
	depth int
	// covers: the change replaces a whole collection, and the changes
	// inside it (its items' removal) are part of it.
	covers bool
}

// Splice applies edits to src, the text of one document, at the positions
// the parser recorded in the edits' nodes (parse src with Decode), and
// returns the new text. Every byte outside the edited lines is kept.
// renders, when not nil, keeps the text of inserts that name their Origin
// for the next documents. An edit that cannot be made in place gives
// ErrNotSpliceable.
//
// sure reports whether every position was found by plain rules alone (no
// block scalars, flow collections, multi-line scalars or removals). When it
// is false the caller checks the result by parsing it again (Decode, then
// Equal against the tree Apply edited).
func Splice(src []byte, edits []Edit, renders *RenderCache) (out []byte, sure bool, err error) {
	if hasLoneCR(src) {
		// YAML also breaks lines at a lone CR. Text that uses only CR
		// (classic Mac) is spliced as LF and turned back; a mix of line
		// ends is not spliceable.
		if bytes.IndexByte(src, '\n') >= 0 {
			return nil, false, ErrNotSpliceable
		}
		out, sure, err := Splice(bytes.ReplaceAll(src, []byte("\r"), []byte("\n")), edits, renders)
		return bytes.ReplaceAll(out, []byte("\n"), []byte("\r")), sure, err
	}
	td := newTextDoc(src)
	td.renders = renders
	td.noteFlowDeletes(edits)
	changes := make([]change, 0, len(edits))
	for _, e := range edits {
		if e.Kind == NullifyEdit && e.Text == "" {
			continue // removing the items left the field empty already
		}
		c, err := td.change(e)
		if err != nil {
			return nil, false, err
		}
		if e.Kind != InsertEdit {
			td.unsure = true
		}
		changes = append(changes, c)
	}
	changes = append(changes, td.extra...)
	// At one offset, text for a deeper collection goes first: it ends
	// before the shallower collection's new key does.
	sort.SliceStable(changes, func(i, j int) bool {
		if changes[i].start != changes[j].start {
			return changes[i].start < changes[j].start
		}
		return changes[i].depth > changes[j].depth
	})
	changes = mergeRemovals(dropCovered(dedupe(changes)))
	if n := len(changes); n > 0 {
		// Removing up to the document's unterminated last line: take the
		// line end before the removed lines too, so none is left behind.
		last := &changes[n-1]
		if last.text == "" && last.end == len(src) && last.start > 0 && src[len(src)-1] != '\n' {
			last.start--
			if td.eol == "\r\n" && last.start > 0 && src[last.start-1] == '\r' {
				last.start--
			}
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(src) + 1024)
	pos := 0
	for _, c := range changes {
		if c.start < pos {
			return nil, false, ErrNotSpliceable // overlapping edits
		}
		buf.Write(src[pos:c.start])
		buf.WriteString(c.text)
		pos = c.end
	}
	buf.Write(src[pos:])
	return buf.Bytes(), !td.unsure, nil
}

func hasLoneCR(src []byte) bool {
	for {
		i := bytes.IndexByte(src, '\r')
		if i < 0 {
			return false
		}
		if i+1 >= len(src) || src[i+1] != '\n' {
			return true
		}
		src = src[i+2:]
	}
}

// dedupe drops a change equal to the one before it: removals of several
// children of one flow collection may each return their common run.
func dedupe(changes []change) []change {
	out := changes[:0]
	for _, c := range changes {
		if n := len(out); n > 0 && out[n-1] == c {
			continue
		}
		out = append(out, c)
	}
	return out
}

// dropCovered drops the changes inside a change that replaces a whole
// collection.
func dropCovered(changes []change) []change {
	out := changes[:0]
	var cover *change
	for i := range changes {
		c := changes[i]
		if cover != nil && c.start >= cover.start && c.end <= cover.end && !(c.start == cover.start && c.end == cover.end && c.covers) {
			continue
		}
		out = append(out, c)
		if c.covers {
			cover = &out[len(out)-1]
		}
	}
	return out
}

// mergeRemovals joins removals of adjacent lines into one change.
func mergeRemovals(changes []change) []change {
	out := changes[:0]
	for _, c := range changes {
		if n := len(out); n > 0 && c.text == "" && out[n-1].text == "" && c.start == out[n-1].end {
			out[n-1].end = c.end
			continue
		}
		out = append(out, c)
	}
	return out
}

func newTextDoc(src []byte) *textDoc {
	td := &textDoc{src: src, lineStarts: []int{0}, eol: "\n", indentStep: 2}
	for i, b := range src {
		if b == '\n' && i+1 < len(src) {
			td.lineStarts = append(td.lineStarts, i+1)
		}
	}
	if bytes.Contains(src, []byte("\r\n")) {
		td.eol = "\r\n"
	}
	return td
}

// lineStart returns the offset of line n (1-based); past the end, len(src).
func (td *textDoc) lineStart(n int) int {
	if n-1 < len(td.lineStarts) {
		return td.lineStarts[n-1]
	}
	return len(td.src)
}

// line returns line n without its line end.
func (td *textDoc) line(n int) string {
	if n < 1 || n > len(td.lineStarts) {
		return ""
	}
	end := td.lineStart(n + 1)
	return strings.TrimRight(string(td.src[td.lineStarts[n-1]:end]), "\r\n")
}

// offset converts a parser position (1-based line, 1-based column in
// characters) to a byte offset.
func (td *textDoc) offset(line, column int) int {
	start := td.lineStart(line)
	rest := td.src[start:]
	for i := 1; i < column && len(rest) > 0; i++ {
		_, size := utf8.DecodeRune(rest)
		rest = rest[size:]
		start += size
	}
	return start
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func isBlankOrComment(s string) bool {
	t := strings.TrimSpace(s)
	return t == "" || t[0] == '#'
}

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
		pair := newMapping()
		pair.Content = []*yaml.Node{newString(e.Key), e.Value}
		text, err = td.renderCached(e, pair, first.Column-1)
	} else {
		dash, derr := td.dashColumn(first)
		if derr != nil {
			return change{}, derr
		}
		text, err = td.renderCached(e, newSequence(e.Value), dash)
		if err == nil && first.Column-1-dash > 2 {
			text = widenItem(text, dash, first.Column-1-dash-2)
		}
	}
	if err != nil {
		return change{}, err
	}
	if at == len(td.src) && len(td.src) > 0 && td.src[len(td.src)-1] != '\n' {
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
	var key *yaml.Node
	for i := 1; i < len(e.Parent.Content); i += 2 {
		if e.Parent.Content[i] == e.Target {
			key = e.Parent.Content[i-1]
		}
	}
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
	} else if i > len(td.src) || string(td.src[start:i]) != key.Value {
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
	var key *yaml.Node
	for i := 1; i < len(e.Parent.Content); i += 2 {
		if e.Parent.Content[i] == e.Target {
			key = e.Parent.Content[i-1]
		}
	}
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
