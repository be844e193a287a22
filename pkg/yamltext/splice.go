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
// renders, when not nil, keeps the text of inserts that name their Origin,
// and of small created fields by their content, for the next documents. An edit that cannot be made in place gives
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
	// Sized once: an injected sidecar is often larger than the document.
	size := len(src)
	for _, c := range changes {
		size += len(c.text) - (c.end - c.start)
	}
	out = make([]byte, 0, max(size, 0))
	pos := 0
	for _, c := range changes {
		if c.start < pos {
			return nil, false, ErrNotSpliceable // overlapping edits
		}
		out = append(out, src[pos:c.start]...)
		out = append(out, c.text...)
		pos = c.end
	}
	out = append(out, src[pos:]...)
	return out, !td.unsure, nil
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
	starts := make([]int, 1, bytes.Count(src, []byte("\n"))+1) // one growth, not log(lines)
	td := &textDoc{src: src, lineStarts: starts, eol: "\n", indentStep: 2}
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
