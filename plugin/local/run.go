package local

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// Streams are the standard input and outputs of a run.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Run injects (or checks, or uninjects) the files given with -f as text,
// one document at a time, with the injector in:
// each result goes out as soon as its document is processed (to stdout, or
// to a temporary file beside the original with --in-place), so memory is
// bounded by the largest document, not by the stream. With --in-place the
// temporary files replace the originals only when no document of any file
// failed.
func (f *Flags) Run(in *inject.Injector, s Streams) error {
	// The collector keeps its default pace (GOGC 100): the live heap is one
	// document and its nodes, so the heap stays near Go's 4 MB minimum. A
	// slower pace (GOGC 200) was measured 10% faster from 3,000 documents
	// on, but slower below (a bigger heap costs page faults that the
	// saved collections do not repay) and 25% larger everywhere.
	files, err := f.localFiles()
	if err != nil {
		return err
	}
	inPlace := f.InPlace && f.DryRun != DryRunClient && !f.Check
	if inPlace {
		if files, err = f.inPlaceTargets(files); err != nil {
			return err
		}
	}
	// One report line per object: buffered, or tens of thousands of
	// objects cost as many write system calls.
	buffered := bufio.NewWriterSize(s.ErrOut, 32<<10)
	defer buffered.Flush()
	var (
		failed, changed, total int
		out                    io.Writer
		held                   *holdWriter
		rewrites               []*inPlaceFile
	)
	// With --in-place the lines wait for the outcome: whether the files
	// were written is known only at the end.
	report := &reporter{w: buffered, hold: inPlace && !f.ContinueOnError}
	defer report.release(0) // on an early return, nothing was written
	outcome := printed
	switch {
	case f.Check, f.Diff:
		outcome = checked
	case f.InPlace && !inPlace:
		outcome = dryRun
	}
	op := f.Op()
	var converted *conversion
	differ := 0 // files --diff found a change in
	switch {
	case f.Check, f.InPlace, f.Diff:
		out = io.Discard // --in-place writes through inPlaceFile below
	case f.Output == "json" || f.Output == "yaml":
		// Converted on request, as kubectl prints: all objects at the end.
		converted = &conversion{format: f.Output}
		out = io.Discard
	default:
		// Nothing is printed unless the input holds an object.
		held = &holdWriter{w: s.Out}
		out = held
	}
	defer func() {
		for _, r := range rewrites {
			r.discard()
		}
	}()
	var prev countWriter // the previous file's output, for the "---" between files
	for i, file := range files {
		w := out
		var rewrite *inPlaceFile
		if inPlace {
			rewrite = &inPlaceFile{path: file.target, name: file.name, mode: file.mode, uid: file.uid, gid: file.gid, owned: file.owned}
			rewrites = append(rewrites, rewrite)
			w = rewrite
		} else if held != nil && i > 0 {
			if prev.n > 0 && prev.last != '\n' {
				_, _ = io.WriteString(w, "\n")
			}
			_, _ = io.WriteString(w, "---\n")
		}
		var before, after bytes.Buffer  // --diff: this file's text, and what it would become
		var sections []textdiff.Section // --diff: the objects of the file, to name them in the hunks
		if f.Diff {
			w = &after
		}
		prev = countWriter{w: w}
		withFile := len(files) > 1 || file.name != "-"
		input, closeIn, err := s.open(file)
		if err != nil {
			return err
		}
		if f.Diff {
			input = io.TeeReader(input, &before)
		}
		src := &errReader{r: input}
		err = manifest.ProcessDocuments(src, &prev, func(d manifest.Document) []byte {
			doc := d.Text
			text, entries := in.ProcessText(op, doc, d.Index)
			for j, e := range entries {
				if file.walked && e.Reason == inject.ReasonNotKubernetes {
					entries[j].Action = inject.Skipped
				}
			}
			if converted != nil {
				// Before the report: an object that cannot be converted is
				// reported as an error, not left out of the output unsaid.
				if err := converted.add(text, entries); err != nil {
					failConversion(entries, err)
				}
			}
			for _, e := range entries {
				total++
				if e.Action == inject.Failed {
					failed++
				} else if e.Changed() {
					changed++
				}
				report.add(i, file.name, withFile, d, e, outcome)
			}
			if held != nil && total > 0 {
				held.release()
			}
			if f.Diff {
				sections = append(sections, textdiff.Section{Line: d.Line, Name: objectNames(entries)})
			}
			// Once a document failed nothing is written (no temporary file),
			// unless asked to write the rest anyway.
			if rewrite != nil && (failed == 0 || f.ContinueOnError) && !bytes.Equal(text, doc) {
				rewrite.change()
			}
			return text
		})
		closeIn()
		if src.err == nil && rewrite != nil && rewrite.err != nil {
			return fmt.Errorf("write %s: %w", rewrite.what(), rewrite.err)
		}
		if err := fileError(file.name, src.err, err); err != nil {
			return err
		}
		if rewrite != nil {
			if err := rewrite.finish(); err != nil {
				return fmt.Errorf("write %s: %w", rewrite.what(), err)
			}
		}
		if f.Diff {
			changed, err := textdiff.Write(s.Out, "a/"+file.name, "b/"+file.name, before.String(), after.String(), textdiff.Options{Color: f.ColorFor(s.Out), Sections: sections})
			if err != nil {
				return fmt.Errorf("write the diff: %w", err)
			}
			if changed {
				differ++
			}
		}
	}
	if total == 0 {
		// As kubectl apply does: an input with no object is a mistake.
		names := make([]string, len(files))
		for i, file := range files {
			names[i] = file.name
		}
		if len(names) == 0 {
			names = f.Filenames
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("no objects to inject in %s", strings.Join(names, ", "))}
	}
	if converted != nil {
		if err := converted.write(s.Out); err != nil {
			return err
		}
	}
	switch {
	case failed > 0 && f.InPlace && f.ContinueOnError && inPlace:
		if _, err := commitAll(rewrites); err != nil {
			return err
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed and were left as they were in their files; the other objects were written", failed, total)}
	case failed > 0 && inPlace:
		report.release(0)
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed, so no file was changed (fix them, or add --continue-on-error to write the others)", failed, total)}
	case failed > 0 && f.InPlace:
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed; a dry run writes no file anyway", failed, total)}
	case failed > 0 && !f.Check:
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed; the output holds them as they were in the input", failed, total)}
	case f.Diff:
		if differ > 0 {
			return DiffChanged(differ, "files")
		}
		return nil
	case f.Check:
		if failed+changed > 0 {
			return &ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d objects are not current (%d would change, %d failed)", failed+changed, total, changed, failed)}
		}
		return nil
	}
	written, err := commitAll(rewrites)
	report.release(written)
	return err
}

// openLocal opens one input for reading.
func (s Streams) open(f *localFile) (io.Reader, func(), error) {
	switch {
	case f.name == "-":
		return s.In, func() {}, nil
	case f.data != nil:
		return bytes.NewReader(f.data), func() {}, nil
	}
	file, err := os.Open(f.name)
	if err != nil {
		return nil, nil, err // names the operation and the path already
	}
	return file, func() { _ = file.Close() }, nil
}

// errReader remembers the error of its reader, to tell a failed read from a
// failed write after manifest.Process.
type errReader struct {
	r   io.Reader
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// countWriter counts what goes through it and remembers the last byte.
type countWriter struct {
	w    io.Writer
	n    int64
	last byte
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if n > 0 {
		c.n += int64(n)
		c.last = p[n-1]
	}
	return n, err
}

// holdWriter keeps what is written to it until release, then writes
// through: an input without any object prints nothing.
type holdWriter struct {
	w    io.Writer
	buf  bytes.Buffer
	open bool
}

func (h *holdWriter) Write(p []byte) (int, error) {
	if !h.open {
		return h.buf.Write(p)
	}
	_, _ = h.w.Write(p) // as before streaming: stdout errors are not the input's fault
	return len(p), nil
}

func (h *holdWriter) release() {
	if h.open {
		return
	}
	h.open = true
	_, _ = h.w.Write(h.buf.Bytes())
	h.buf = bytes.Buffer{}
}

// fileError names the input in an error of reading it (readErr) or of
// processing its documents (err); nil when there is neither.
func fileError(name string, readErr, err error) error {
	switch {
	case readErr != nil && name == "-":
		return fmt.Errorf("read stdin: %w", readErr)
	case readErr != nil:
		return readErr // os errors name the operation and the path already
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
