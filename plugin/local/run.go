package local

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"
	"io"
	"os"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/dryrun"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// Run injects (or checks, or uninjects) the files given with -f as text,
// one document at a time, with the injector in:
// each result goes out as soon as its document is processed (to stdout, or
// to a temporary file beside the original with --in-place), so memory is
// bounded by a few dozen documents (those parsed ahead on the other
// cores, manifest.ProcessAhead), not by the stream. With --in-place the
// temporary files replace the originals only when no document of any file
// failed.
func (fe FrontEnd) Run(f *config.Flags, in *inject.Injector, s config.Streams) error {
	// The collector keeps its default pace (GOGC 100): the live heap is a
	// few dozen documents and their nodes, so the heap stays near Go's 4 MB
	// minimum. A
	// slower pace (GOGC 200) was measured 10% faster from 3,000 documents
	// on, but slower below (a bigger heap costs page faults that the
	// saved collections do not repay) and 25% larger everywhere.
	files, err := fe.localFiles(f)
	if err != nil {
		return err
	}
	inPlace := f.InPlace && f.DryRun != dryrun.Client && !f.Check
	if inPlace {
		if files, err = inPlaceTargets(f, files); err != nil {
			return err
		}
	}
	// One report line per object: buffered, or tens of thousands of
	// objects cost as many write system calls.
	buffered := bufio.NewWriterSize(s.ErrOut, 32<<10)
	defer buffered.Flush()
	r := newRun(f, in, s, files, inPlace)
	// With --in-place the lines wait for the outcome: whether the files
	// were written is known only at the end.
	r.report = &reporter{w: buffered, hold: inPlace && !f.ContinueOnError}
	defer r.report.release(0) // on an early return, nothing was written
	defer r.discard()
	for i, file := range files {
		switch {
		case inPlace:
			err = r.rewriteFile(i, file)
		case f.Diff:
			err = r.diffFile(i, file)
		default:
			err = r.printFile(i, file)
		}
		if err != nil {
			return err
		}
	}
	if r.total == 0 {
		return r.noObjects()
	}
	if r.converted != nil {
		if err := r.converted.write(s.Out); err != nil {
			return err
		}
	}
	return r.finish()
}

// localRun is the state of one Run: where the output goes, the report and
// the counts the exit status comes from.
type localRun struct {
	f       *config.Flags
	in      *inject.Injector
	s       config.Streams
	op      inject.Op
	files   []*localFile
	inPlace bool // --in-place, and writing (not a dry run)
	outcome outcome
	report  *reporter
	// out is where printFile writes: stdout through held, or nowhere
	// (--check, -o json|yaml, --in-place --dry-run=client).
	out                    io.Writer
	held                   *holdWriter
	converted              *conversion    // -o json|yaml
	rewrites               []*inPlaceFile // --in-place
	prev                   countWriter    // the previous file's output, for the "---" between files
	failed, changed, total int
	differ                 int // files --diff found a change in
}

// newRun picks what a changed object's report line says and where the
// output goes, by mode.
func newRun(f *config.Flags, in *inject.Injector, s config.Streams, files []*localFile, inPlace bool) *localRun {
	r := &localRun{f: f, in: in, s: s, op: f.Op(), files: files, inPlace: inPlace, outcome: printed, out: io.Discard}
	switch {
	case f.Check, f.Diff:
		r.outcome = checked
	case f.InPlace && !inPlace:
		r.outcome = dryRun
	}
	switch {
	case f.Check, f.InPlace, f.Diff:
		// --in-place writes through inPlaceFile (rewriteFile), --diff to a
		// buffer (diffFile).
	case f.Output == "json" || f.Output == "yaml":
		// Converted on request, as kubectl prints: all objects at the end.
		r.converted = &conversion{format: f.Output}
	default:
		// Nothing is printed unless the input holds an object.
		r.held = &holdWriter{w: s.Out}
		r.out = r.held
	}
	return r
}

// fileOutput is where the documents of one file go.
type fileOutput struct {
	w        io.Writer
	rewrite  *inPlaceFile       // --in-place: w itself, told when a document changes
	before   io.Writer          // --diff: a copy of the input
	sections []textdiff.Section // --diff: the objects of the file, to name them in the hunks
	// --diff: the lines the documents so far gained (or lost, below 0)
	linesGained int
}

// printFile processes one file to r.out, after a "---" between files on
// stdout.
func (r *localRun) printFile(i int, file *localFile) error {
	if r.held != nil && i > 0 {
		if r.prev.n > 0 && r.prev.last != '\n' {
			_, _ = io.WriteString(r.out, "\n")
		}
		_, _ = io.WriteString(r.out, "---\n")
	}
	return r.processFile(i, file, &fileOutput{w: r.out})
}

// rewriteFile processes one file of --in-place to a temporary file beside
// it (started at the first change), made durable once the file is done;
// finish renames it over the original.
func (r *localRun) rewriteFile(i int, file *localFile) error {
	rewrite := &inPlaceFile{path: file.target, name: file.name, mode: file.mode, uid: file.uid, gid: file.gid, owned: file.owned}
	r.rewrites = append(r.rewrites, rewrite)
	if err := r.processFile(i, file, &fileOutput{w: rewrite, rewrite: rewrite}); err != nil {
		return err
	}
	if err := rewrite.finish(); err != nil {
		return fmt.Errorf("write %s: %w", rewrite.what(), err)
	}
	return nil
}

// diffFile processes one file of --diff and prints how it would change.
func (r *localRun) diffFile(i int, file *localFile) error {
	var before, after bytes.Buffer // this file's text, and what it would become
	out := &fileOutput{w: &after, before: &before}
	if err := r.processFile(i, file, out); err != nil {
		return err
	}
	changed, err := textdiff.Write(r.s.Out, "a/"+file.name, "b/"+file.name, before.String(), after.String(),
		textdiff.Options{Color: r.f.ColorFor(r.s.Out), Sections: out.sections})
	if err != nil {
		return fmt.Errorf("write the diff: %w", err)
	}
	if changed {
		r.differ++
	}
	return nil
}

// processFile reads input number i and writes every document of it,
// processed, to out.
func (r *localRun) processFile(i int, file *localFile, out *fileOutput) error {
	withFile := len(r.files) > 1 || file.name != "-"
	input, closeIn, err := open(r.s, file)
	if err != nil {
		return err
	}
	if out.before != nil {
		input = io.TeeReader(input, out.before)
	}
	src := &errReader{r: input}
	r.prev = countWriter{w: out.w}
	// Documents are parsed on the other cores, ahead of the one processed.
	err = manifest.ProcessAhead(src, &r.prev, inject.ParseDocuments, func(d manifest.Document, parsed *inject.Parsed) []byte {
		return r.document(i, file, withFile, d, parsed, out)
	})
	closeIn()
	if src.err == nil && out.rewrite != nil && out.rewrite.err != nil {
		return fmt.Errorf("write %s: %w", out.rewrite.what(), out.rewrite.err)
	}
	return fileError(file.name, src.err, err)
}

// document processes document d of input number i, parsed, counts and
// reports its objects, and returns its text for the output.
func (r *localRun) document(i int, file *localFile, withFile bool, d manifest.Document, parsed *inject.Parsed, out *fileOutput) []byte {
	doc := d.Text
	text, entries := r.in.ProcessParsed(r.op, parsed)
	for j, e := range entries {
		if file.walked && e.Reason == inject.ReasonNotKubernetes {
			entries[j].Action = inject.Skipped
		}
	}
	if r.converted != nil {
		// Before the report: an object that cannot be converted is
		// reported as an error, not left out of the output unsaid.
		if err := r.converted.add(text, entries); err != nil {
			failConversion(entries, err)
		}
	}
	for _, e := range entries {
		r.total++
		if e.Action == inject.Failed {
			r.failed++
		} else if e.Changed() {
			r.changed++
		}
		r.report.add(i, file.name, withFile, d, e, r.outcome)
	}
	if r.held != nil && r.total > 0 {
		r.held.release()
	}
	if r.f.Diff {
		// Where the document begins in the output: its line in the input,
		// moved by the lines the documents before it gained or lost.
		out.sections = append(out.sections, textdiff.Section{Line: d.Line, NewLine: d.Line + out.linesGained, Name: objectNames(entries)})
		out.linesGained += bytes.Count(text, []byte("\n")) - bytes.Count(doc, []byte("\n"))
	}
	// Once a document failed nothing is written (no temporary file),
	// unless asked to write the rest anyway.
	if out.rewrite != nil && (r.failed == 0 || r.f.ContinueOnError) && !bytes.Equal(text, doc) {
		out.rewrite.change()
	}
	return text
}

// noObjects is the error of an input with no object: as kubectl apply
// says, a mistake.
func (r *localRun) noObjects() error {
	names := make([]string, len(r.files))
	for i, file := range r.files {
		names[i] = file.name
	}
	if len(names) == 0 {
		names = r.f.Filenames
	}
	return &config.ExitError{Code: 1, Err: fmt.Errorf("no objects to inject in %s", strings.Join(names, ", "))}
}

// finish writes the files of --in-place unless an object failed (or
// anyway with --continue-on-error), and returns the exit error of the
// mode: failures, --diff's changes, --check's objects not current.
func (r *localRun) finish() error {
	f, failed, total := r.f, r.failed, r.total
	switch {
	case failed > 0 && r.inPlace && f.ContinueOnError:
		if _, err := commitAll(r.rewrites); err != nil {
			return err
		}
		return &config.ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed and were left as they were in their files; the other objects were written", failed, total)}
	case failed > 0 && r.inPlace:
		r.report.release(0)
		return &config.ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed, so no file was changed (fix them, or add --continue-on-error to write the others)", failed, total)}
	case failed > 0 && f.InPlace:
		return &config.ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed; a dry run writes no file anyway", failed, total)}
	case failed > 0 && !f.Check:
		return &config.ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed; the output holds them as they were in the input", failed, total)}
	case f.Diff:
		if r.differ > 0 {
			return config.DiffChanged(r.differ, "files")
		}
		return nil
	case f.Check:
		if failed+r.changed > 0 {
			return &config.ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d objects are not current (%d would change, %d failed)", failed+r.changed, total, r.changed, failed)}
		}
		return nil
	}
	written, err := commitAll(r.rewrites)
	r.report.release(written)
	return err
}

// discard removes the temporary files of --in-place that were not renamed.
func (r *localRun) discard() {
	for _, rw := range r.rewrites {
		rw.discard()
	}
}

// openLocal opens one input for reading.
func open(s config.Streams, f *localFile) (io.Reader, func(), error) {
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
