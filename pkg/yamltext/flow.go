package yamltext

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file splices flow collections ([...] and {...}) and JSON documents
// in their own style: an item goes after the last one with the separator
// the author used between items (",\n    " in indented JSON, ", " in YAML
// flow, "," in compact JSON), rendered as JSON in a JSON document (quoted
// keys and strings, the siblings' indentation) and as YAML flow elsewhere.
// Removing an item removes exactly the separator its insertion added.

// flowLayout is how the children of one flow collection are laid out.
type flowLayout struct {
	json      bool   // the document is JSON: keys and strings are quoted
	sep       string // between two children, the comma included
	multiline bool   // one child per line
	indent    int    // multiline: the column of the children
	step      int    // multiline: the indentation step of the document
	colon     string // between a key and its value
}

// span is where one child (an item, or a key and its value) lies.
type span struct{ start, end int }

// flowBounds returns the offsets of a flow collection's opening and closing
// brackets.
func (td *textDoc) flowBounds(n *yaml.Node) (open, close int, err error) {
	if n.Line == 0 || n.Anchor != "" || (n.Tag != "" && n.Style&yaml.TaggedStyle != 0) {
		return 0, 0, ErrNotSpliceable
	}
	open = td.offset(n.Line, n.Column)
	if open >= len(td.src) || (td.src[open] != '[' && td.src[open] != '{') {
		return 0, 0, ErrNotSpliceable
	}
	end, err := flowEnd(td.src, open)
	if err != nil {
		return 0, 0, err
	}
	return open, end - 1, nil
}

// flowEnd returns the offset just past the bracket that closes the flow
// collection opening at i.
func flowEnd(src []byte, i int) (int, error) {
	depth := 0
	for ; i < len(src); i++ {
		switch c := src[i]; c {
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				return i + 1, nil
			}
		case '"', '\'':
			end, err := quoteEnd(src, i)
			if err != nil {
				return 0, err
			}
			i = end - 1
		case '#':
			if i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
		}
	}
	return 0, ErrNotSpliceable
}

// flowNodeSpan returns where node n, inside a flow collection, starts and
// ends in the text.
func (td *textDoc) flowNodeSpan(n *yaml.Node) (span, error) {
	if n.Line == 0 || n.Kind == yaml.AliasNode || n.Anchor != "" {
		return span{}, ErrNotSpliceable
	}
	start := td.offset(n.Line, n.Column)
	switch {
	case n.Kind != yaml.ScalarNode:
		if n.Style&yaml.FlowStyle == 0 {
			return span{}, ErrNotSpliceable
		}
		_, close, err := td.flowBounds(n)
		return span{start, close + 1}, err
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		end, err := td.quotedEnd(n, start)
		return span{start, end}, err
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return span{}, ErrNotSpliceable
	}
	end := start
	for end < len(td.src) && !strings.ContainsRune(",]}\r\n", rune(td.src[end])) {
		if td.src[end] == '#' && end > start && td.src[end-1] == ' ' {
			break
		}
		if td.src[end] == ':' && (end+1 == len(td.src) || strings.ContainsRune(" \t\r\n,[]{}", rune(td.src[end+1]))) {
			break // the end of a key
		}
		end++
	}
	text := strings.TrimRight(string(td.src[start:end]), " \t")
	if text != n.Value && !(n.Value == "" && nodes.IsNull(n)) {
		return span{}, ErrNotSpliceable // multi-line or tagged plain scalar
	}
	return span{start, start + len(text)}, nil
}

// flowChildren returns the spans of a flow collection's children: items,
// or key and value pairs.
func (td *textDoc) flowChildren(n *yaml.Node) ([]span, error) {
	var out []span
	if n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			s, err := td.flowNodeSpan(item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	for pair := range slices.Chunk(n.Content, 2) {
		k, err := td.flowNodeSpan(pair[0])
		if err != nil {
			return nil, err
		}
		v, err := td.flowNodeSpan(pair[1])
		if err != nil {
			if !nodes.IsNull(pair[1]) || pair[1].Value != "" {
				return nil, err
			}
			v = k // "{key}" or "{key: }": the pair ends at the colon
			if c := bytes.IndexByte(td.src[k.end:], ':'); c >= 0 && !bytes.ContainsAny(td.src[k.end:k.end+c], ",]}") {
				v.end = k.end + c + 1
			}
		}
		out = append(out, span{k.start, v.end})
	}
	return out, nil
}

// onlySeparator is compiled on first use: most runs edit no flow
// collection.
var onlySeparator = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*,[ \t\r\n]*$`) })

// layout learns how the children of the flow collection n are separated
// and indented.
func (td *textDoc) layout(n *yaml.Node, open, close int, children []span) (flowLayout, error) {
	l := flowLayout{json: td.isJSON(), colon: ": "}
	if l.json {
		l.colon = td.jsonColon()
	}
	switch len(children) {
	case 0:
		l.multiline = l.json && td.multilineJSON()
		l.sep = l.inlineSep()
	case 1:
		lead := string(td.src[open+1 : children[0].start])
		if strings.Contains(lead, "\n") {
			l.sep = "," + lead
		} else if lead == "" {
			l.sep = l.inlineSep()
		} else {
			l.sep = ", "
		}
	default:
		l.sep = string(td.src[children[0].end:children[1].start])
		if !onlySeparator().MatchString(l.sep) {
			return l, ErrNotSpliceable // a comment between items
		}
		l.sep = strings.TrimLeft(l.sep, " \t")
	}
	if strings.Contains(l.sep, "\n") {
		l.multiline = true
	}
	if l.multiline {
		l.step = td.flowStep()
		if len(children) > 0 {
			l.indent = children[0].start - td.lineStart(td.lineOf(children[0].start))
		} else {
			l.indent = indentOf(td.line(td.lineOf(open))) + l.step
		}
		if i := strings.LastIndex(l.sep, "\n"); i >= 0 && strings.Trim(l.sep[i+1:], " ") != "" {
			return l, ErrNotSpliceable
		}
	}
	return l, nil
}

// inlineSep separates children on one line when the collection itself
// does not show it: "," in compact JSON (whose colons have no space),
// ", " in spaced JSON and in YAML.
func (l flowLayout) inlineSep() string {
	if l.json && l.colon == ":" {
		return ","
	}
	return ", "
}

// lineOf returns the 1-based line holding offset.
func (td *textDoc) lineOf(offset int) int {
	lo, hi := 0, len(td.lineStarts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if td.lineStarts[mid] <= offset {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

// isJSON reports whether the document is JSON: a flow mapping whose keys
// are double-quoted.
func (td *textDoc) isJSON() bool {
	if td.jsonKnown {
		return td.json
	}
	td.jsonKnown = true
	trimmed := bytes.TrimLeft(td.src, " \t\r\n")
	td.json = len(trimmed) > 0 && trimmed[0] == '{' && bytes.HasPrefix(bytes.TrimLeft(trimmed[1:], " \t\r\n"), []byte(`"`))
	return td.json
}

func (td *textDoc) multilineJSON() bool {
	return bytes.Contains(bytes.TrimSpace(td.src), []byte("\n"))
}

// jsonColon is the separator the document puts between keys and values:
// ": " where a key's closing quote is followed by a space. A quote escaped
// inside a string (\": in an injected Envoy bootstrap) is not a key's.
func (td *textDoc) jsonColon() string {
	src := td.src
	for {
		i := bytes.Index(src, []byte(`": `))
		if i < 0 {
			return ":"
		}
		backslashes := 0
		for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return ": "
		}
		src = src[i+3:]
	}
}

// flowStep is the indentation step of a multi-line flow document: the
// indentation of its first indented line.
func (td *textDoc) flowStep() int {
	for n := 2; n <= len(td.lineStarts); n++ {
		if text := td.line(n); strings.TrimSpace(text) != "" {
			if step := indentOf(text) - indentOf(td.line(n-1)); step > 0 && step <= 8 {
				return step
			}
		}
	}
	return 2
}

// flowParent returns where a flow collection that an edit changes opens,
// closes and has its children. Such splices are checked by parsing the
// result again.
func (td *textDoc) flowParent(n *yaml.Node) (open, close int, children []span, err error) {
	td.unsure = true
	if open, close, err = td.flowBounds(n); err != nil {
		return 0, 0, nil, err
	}
	children, err = td.flowChildren(n)
	return open, close, children, err
}

// flowInsert adds a child to a flow collection.
func (td *textDoc) flowInsert(e Edit) (change, error) {
	open, close, children, err := td.flowParent(e.Parent)
	if err != nil {
		return change{}, err
	}
	l, err := td.layout(e.Parent, open, close, children)
	if err != nil {
		return change{}, err
	}
	var child strings.Builder
	if e.Parent.Kind == yaml.MappingNode {
		child.WriteString(l.scalar(nodes.NewString(e.Key), true))
		child.WriteString(l.colon)
	}
	if err := l.render(&child, e.Value, l.indent); err != nil {
		return change{}, err
	}
	text := child.String()
	switch {
	case e.Before != nil:
		at := childOrdinal(e.Parent, e.Before)
		if at < 0 || at >= len(children) {
			return change{}, ErrNotSpliceable
		}
		if at == 0 {
			return change{start: children[0].start, end: children[0].start, text: text + l.sep}, nil
		}
		// Between two children: after the one before, with a copy of the
		// separator that stands between them, so that flowDelete, which
		// takes a child with the separator before it, leaves the original
		// separator as it was (",", ", " or a line break and indentation).
		sep := string(td.src[children[at-1].end:children[at].start])
		if !onlySeparator().MatchString(sep) {
			return change{}, ErrNotSpliceable // a comment between items
		}
		return change{start: children[at-1].end, end: children[at-1].end, text: sep + text}, nil
	case len(children) == 0:
		// Several inserts into one empty collection: separators between
		// them, and in multi-line style the closing bracket on its own line
		// (a change of its own, ordered last).
		if td.flowInserted == nil {
			td.flowInserted = map[*yaml.Node]int{}
		}
		nth := td.flowInserted[e.Parent]
		td.flowInserted[e.Parent]++
		switch {
		case nth > 0 && l.multiline:
			text = "," + td.eol + strings.Repeat(" ", l.indent) + text
		case nth > 0:
			text = l.sep + text
		case l.multiline:
			text = td.eol + strings.Repeat(" ", l.indent) + text
		}
		c := change{start: open + 1, end: open + 1, text: text}
		if nth == 0 && l.multiline {
			// The closing bracket goes on a line of its own, in place of
			// the blank space that was between the brackets (the record
			// keeps it, see emptyInner).
			inner := td.src[open+1 : close]
			if len(inner) > 0 && blankOnly(inner) == "" {
				return change{}, ErrNotSpliceable // a comment between the brackets
			}
			td.extra = append(td.extra, change{start: open + 1, end: close, text: td.eol + strings.Repeat(" ", l.indent-l.step), depth: -1})
		}
		return c, nil
	default:
		end := children[len(children)-1].end
		return change{start: end, end: end, text: l.sep + text}, nil
	}
}

// flowDelete removes a child of a flow collection with the separator its
// insertion added: the one before it, or after it when it is the first.
func (td *textDoc) flowDelete(e Edit) (change, error) {
	open, close, children, err := td.flowParent(e.Parent)
	if err != nil {
		return change{}, err
	}
	at := childOrdinal(e.Parent, e.Target)
	if at < 0 || at >= len(children) {
		return change{}, ErrNotSpliceable
	}
	// The run of removed children this one is in goes at once.
	deleted := td.flowDeleted[e.Parent]
	first, last := at, at
	for first > 0 && deleted[first-1] {
		first--
	}
	for last+1 < len(children) && deleted[last+1] {
		last++
	}
	switch {
	case first == 0 && last == len(children)-1 && !bytes.ContainsAny(td.src[open+1:children[0].start], "\r\n"):
		// The children are all an insert added right after the opening
		// bracket: what was between the brackets before ("{ }", "[\n  ]")
		// follows them and stays.
		return change{start: children[0].start, end: children[last].end}, nil
	case first == 0 && last == len(children)-1:
		// Laid out on lines of their own (indented JSON): what was between
		// the brackets before comes back from the record.
		return change{start: open + 1, end: close, text: e.Text}, nil
	case first == 0:
		return change{start: children[0].start, end: children[last+1].start}, nil
	default:
		return change{start: children[first-1].end, end: children[last].end}, nil
	}
}

// noteFlowDeletes records which children of flow collections the edits
// remove.
func (td *textDoc) noteFlowDeletes(edits []Edit) {
	for _, e := range edits {
		if e.Kind != DeleteEdit || e.Parent.Style&yaml.FlowStyle == 0 {
			continue
		}
		at := childIndex(e.Parent, e.Target)
		if e.Parent.Kind == yaml.MappingNode {
			at /= 2
		}
		if td.flowDeleted == nil {
			td.flowDeleted = map[*yaml.Node]map[int]bool{}
		}
		if td.flowDeleted[e.Parent] == nil {
			td.flowDeleted[e.Parent] = map[int]bool{}
		}
		td.flowDeleted[e.Parent][at] = true
	}
}

// childOrdinal is node's place among the children of the collection
// parent as flowChildren lists them (a pair's, for a key of a mapping),
// -1 when node is not one.
func childOrdinal(parent, node *yaml.Node) int {
	at := 0
	for child := range slices.Chunk(parent.Content, childStep(parent)) {
		if child[0] == node {
			return at
		}
		at++
	}
	return -1
}
