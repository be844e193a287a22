package local

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/report"
)

// outcome is what became of a changed object, as its report line says.
type outcome int

const (
	printed   outcome = iota // printed, or written in place: "injected"
	checked                  // --check: "would be injected"
	dryRun                   // --in-place --dry-run=client: "injected (dry run)"
	unwritten                // --in-place when another document failed: "would be injected (not written)"
)

// reporter writes the report, one line per object. With --in-place the
// lines wait until it is known whether the files were written, so that no
// line says "injected" about a file that was left as it was.
type reporter struct {
	w    *bufio.Writer
	hold bool
	held []heldLine
}

// heldLine is a report line in both of its possible forms, and the index
// of its file among the inputs.
type heldLine struct {
	file               int
	written, unwritten string
}

// add reports entry e of document d of input number file (named src).
func (r *reporter) add(file int, src string, withFile bool, d manifest.Document, e inject.Entry, o outcome) {
	line := reportLine(src, withFile, d, e, o)
	if !r.hold {
		fmt.Fprintln(r.w, line)
		return
	}
	h := heldLine{file: file, written: line, unwritten: line}
	if e.Changed() {
		h.unwritten = reportLine(src, withFile, d, e, unwritten)
	}
	r.held = append(r.held, h)
}

// release prints the held lines: those of the first written files as
// written, the others as not.
func (r *reporter) release(written int) {
	for _, h := range r.held {
		if h.file < written {
			fmt.Fprintln(r.w, h.written)
		} else {
			fmt.Fprintln(r.w, h.unwritten)
		}
	}
	r.held = nil
}

// reportLine renders one object's line: "app.yaml: deployment.apps/web
// injected", or for an error, where it is in the file the way compilers
// say it, with the document counted from 1 (see report.Error):
//
//	app.yaml:14: deployment.apps/web error: invalid_object: spec.template.spec.containers: must be a list (document 2)
//	app.yaml:9:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content
func reportLine(src string, withFile bool, d manifest.Document, e inject.Entry, o outcome) string {
	if e.Action == inject.Failed {
		return report.Error(src, d, e)
	}
	var b strings.Builder
	if withFile {
		b.WriteString(src)
		b.WriteString(": ")
	}
	b.WriteString(report.Object(e))
	b.WriteByte(' ')
	changed := e.Changed()
	if changed && (o == checked || o == unwritten) {
		b.WriteString("would be ")
	}
	b.WriteString(string(e.Action))
	if e.Action == inject.Skipped && e.Reason != "" {
		fmt.Fprintf(&b, ": %s", e.Reason)
	}
	if e.Reformatted {
		b.WriteString(" (reformatted)")
	}
	switch {
	case changed && o == unwritten:
		b.WriteString(" (not written)")
	case changed && o == dryRun:
		b.WriteString(" (dry run)")
	}
	return b.String()
}

// objectNames names a document's objects as the report lines do
// ("deployment.apps/web"), for the headers of --diff's hunks.
func objectNames(entries []inject.Entry) string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = report.Object(e)
	}
	return strings.Join(names, ", ")
}
