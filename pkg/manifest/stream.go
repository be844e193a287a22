package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Func handles one document: its 0-based index among the documents that have
// content, and its text. It returns the text to write.
type Func func(index int, doc []byte) []byte

// Document is one document of a stream that has content.
type Document struct {
	// Index is the 0-based index among the documents that have content.
	Index int
	// Line is the 1-based line of the stream on which Text starts.
	Line int
	// Text is the document's text, comments above it included; the
	// separator lines around it are not part of it.
	Text []byte
}

// Process reads YAML documents from r, calls fn on each one that has
// content, and writes the results to w. Separator lines ("---") and
// documents holding only comments are written through unchanged.
func Process(r io.Reader, w io.Writer, fn Func) error {
	return ProcessDocuments(r, w, func(d Document) []byte { return fn(d.Index, d.Text) })
}

// ProcessDocuments is Process with the position of each document in its
// stream, for reports that name lines of the file.
func ProcessDocuments(r io.Reader, w io.Writer, fn func(Document) []byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	err := scan(r, func(text []byte, d *Document) error {
		if d != nil {
			text = fn(*d)
		}
		_, err := bw.Write(text)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// scan reads the stream r and hands yield each piece of it in order: a
// document that has content (d set, text its Text), or text that is
// written through as it is (separator lines, documents of blank lines and
// comments only; d nil). text is valid only during the call. scan stops
// at the first error of yield or of reading.
func scan(r io.Reader, yield func(text []byte, d *Document) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var doc bytes.Buffer
	var values jsonValues // where concatenated JSON values begin
	index := 0
	lines, docLine := 0, 1 // lines read so far; the line doc starts on
	emit := func(text []byte) error {
		if !HasContent(text) {
			return yield(text, nil)
		}
		d := Document{Index: index, Line: docLine, Text: text}
		index++
		return yield(text, &d)
	}
	flush := func() error {
		defer func() { values = jsonValues{} }()
		if doc.Len() == 0 {
			return nil
		}
		err := emit(doc.Bytes())
		doc.Reset()
		return err
	}
	// cutValues hands each complete JSON value of doc that another one
	// follows to yield as a document of its own.
	cutValues := func() error {
		for {
			at := values.next(doc.Bytes())
			if at < 0 {
				return nil
			}
			part := doc.Next(at)
			if err := emit(part); err != nil {
				return err
			}
			docLine += bytes.Count(part, []byte("\n"))
			values.cut(at)
		}
	}
	for {
		line, err := br.ReadSlice('\n')
		for err == bufio.ErrBufferFull {
			// A line longer than the buffer: gather it whole.
			doc.Write(line)
			line, err = br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading YAML stream: %w", err)
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			lines++
		}
		if IsSeparator(line) {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			if yerr := yield(line, nil); yerr != nil {
				return yerr
			}
			docLine = lines + 1
		} else {
			doc.Write(line)
			if err := cutValues(); err != nil {
				return err
			}
		}
		if err == io.EOF {
			break
		}
	}
	return flush()
}

// IsSeparator reports whether line is a document separator: "---" alone or
// followed by a comment.
func IsSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := bytes.TrimLeft(bytes.TrimRight(line[3:], "\r\n"), " \t")
	return len(rest) == 0 || rest[0] == '#'
}

// HasContent reports whether a document has anything besides blank lines
// and comments.
func HasContent(doc []byte) bool {
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}
