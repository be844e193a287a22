package cmd

import (
	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/report"
)

// fieldErrors finds, for the objects of the -f inputs, the errors about a
// field that the core reports in the file's own copy of an object, with
// where that field is in the file ("app.yaml:12:9:"). The live object is
// what gets injected; these say where in the file to look:
//   - an object whose pod spec the core cannot read in the file (containers
//     that are not a list) is an error at that field, and is not looked up;
//   - an error of the live object that the file's copy has too (a container
//     of the sidecar's name, a port in use) is reported at the file's field.
type fieldErrors struct {
	injector *inject.Injector
	op       inject.Op
	// The entries of the last document run, by List item (-1: the
	// document itself).
	file    string
	doc     int
	entries map[int]inject.Entry
	where   map[int]string
}

// of returns the error entry of obj in its file, with where its field
// is, or ok false when the file's copy has no error about a field.
func (f *fieldErrors) of(obj config.FileObject) (e inject.Entry, where string, ok bool) {
	if f.injector == nil {
		return e, "", false
	}
	if f.entries == nil || f.file != obj.File || f.doc != obj.Document.Index {
		f.file, f.doc = obj.File, obj.Document.Index
		f.entries, f.where = map[int]inject.Entry{}, map[int]string{}
		// ProcessText edits a copy: the document's text is left as it is.
		_, entries := f.injector.ProcessText(f.op, append([]byte(nil), obj.Document.Text...), obj.Document.Index)
		for _, e := range entries {
			if e.Action == inject.Failed && e.Line > 0 {
				line, column, _ := report.Position(obj.Document, e)
				f.entries[e.Item], f.where[e.Item] = e, report.Where(obj.File, line, column)
			}
		}
	}
	e, ok = f.entries[obj.Entry.Item]
	return e, f.where[obj.Entry.Item], ok
}
