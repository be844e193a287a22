package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yamlv4 "go.yaml.in/yaml/v4"
)

// SyntaxError says where a document is not valid YAML, in lines and
// columns of its stream (both 1-based).
type SyntaxError struct {
	// Line and Column are where the parser gave up; Column is 0 when the
	// parser does not know it.
	Line, Column int
	// Problem is what the parser found there, in its own words ("did not
	// find expected node content").
	Problem string
	// Context is what the parser was reading ("while parsing a flow
	// mapping"), and ContextLine and ContextColumn where that began; empty
	// and 0 when the problem needs no context.
	Context                    string
	ContextLine, ContextColumn int
}

// Error reads "did not find expected node content (while parsing a flow
// node that began at line 3, column 9)": the problem, then its context
// when that began elsewhere. The position of the problem itself is left
// to the caller, which knows the file's name.
func (e *SyntaxError) Error() string {
	msg := e.Problem
	if e.Context != "" && (e.ContextLine != e.Line || e.ContextColumn != e.Column) && e.ContextLine > 0 {
		msg += fmt.Sprintf(" (%s that began at %s)", e.Context, position(e.ContextLine, e.ContextColumn))
	}
	return msg
}

// Position renders where the parser gave up: "line 4, column 7".
func (e *SyntaxError) Position() string { return position(e.Line, e.Column) }

func position(line, column int) string {
	if column > 0 {
		return fmt.Sprintf("line %d, column %d", line, column)
	}
	return fmt.Sprintf("line %d", line)
}

// SyntaxError parses the document and returns where it is not valid YAML,
// or nil when it is. It exists for error reports: the injection core's
// parser says only on which line of the document it gave up, and for many
// problems that line is where the enclosing collection began (counted from
// 0). This parser, of the same libyaml lineage, keeps the exact line and
// column of the problem and of its context.
//
// Text that holds a second document without a "---" line before it (YAML
// allows one after "...") is an error here too, at the second document:
// the injection core reads one document at a time.
func (d Document) SyntaxError() *SyntaxError {
	dec := yamlv4.NewDecoder(bytes.NewReader(d.Text))
	var node, more yamlv4.Node
	err := dec.Decode(&node)
	if err == nil {
		err = dec.Decode(&more)
		if err == nil {
			return &SyntaxError{Line: d.LineOf(more.Line), Column: more.Column, Problem: `a second document begins here without a "---" line before it`}
		}
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var le *yamlv4.LoadError
	if !errors.As(err, &le) {
		// A problem without a position: the document's first line.
		return &SyntaxError{Line: d.Line, Problem: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	e := &SyntaxError{Line: d.Line, Problem: le.Message, Context: le.ContextMsg}
	if le.Mark.Line > 0 {
		e.Line, e.Column = d.Line+le.Mark.Line-1, le.Mark.Column
	}
	if le.ContextMark.Line > 0 {
		e.ContextLine, e.ContextColumn = d.Line+le.ContextMark.Line-1, le.ContextMark.Column
	}
	return e
}

// LineOf returns the 1-based line of the stream on which line n (1-based)
// of the document's text lies.
func (d Document) LineOf(n int) int { return d.Line + n - 1 }

// ContentLine returns the line of the stream on which the document's
// content begins: its first line that is neither blank nor a comment.
func (d Document) ContentLine() int {
	text := d.Text
	for n := 0; len(text) > 0; n++ {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' {
			return d.Line + n
		}
	}
	return d.Line
}
