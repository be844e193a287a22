package config

import (
	"io"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/report"
)

// Streams are the standard input and outputs of a run.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Local is the --local front end (plugin/local) as the full command runs
// it: the code the kubectl-inject binary serves --local with, handed to
// the full command by its main package, so that neither front end
// imports the other.
type Local interface {
	// Run injects (or checks, or uninjects) the files given with -f.
	Run(f *Flags, in *inject.Injector, s Streams) error
	// ReadObjects reads the -f inputs as Run does and calls fn with every
	// object, in order, and every document that is not one as a failed
	// (or skipped) FileObject. The error is about an input as a whole.
	ReadObjects(f *Flags, in io.Reader, fn func(FileObject)) error
}

// FileObject is one object of the -f inputs as the live front end reads
// them: who it is, to look it up in the cluster, or why it is not an
// object that can be looked up.
type FileObject struct {
	// File names the input ("-" for stdin).
	File string
	// Document is the object's document in File.
	Document manifest.Document
	// Entry names the object (apiVersion, kind, namespace, name; the
	// document and List item counted from 0). Its Action is inject.Failed
	// (or inject.Skipped, for a document that is not a Kubernetes object in
	// a walked directory) when the object cannot be looked up; Reason and
	// Message say why.
	Entry inject.Entry
	// Labels are the object's metadata.labels, for --selector.
	Labels map[string]string
	// Skip is the line --local prints for a skipped document
	// ("app.yaml: document 1 skipped: not_kubernetes").
	Skip string
}

// Line words o's entry as --local reports it: an error where it is in the
// file ("app.yaml:18:16: document 2 error: invalid_yaml: not valid YAML:
// ..."), or the skip.
func (o FileObject) Line() string {
	if o.Entry.Action == inject.Failed {
		return report.Error(o.File, o.Document, o.Entry)
	}
	return o.Skip
}

// Fail returns o as an object that failed with err, for an error found
// after reading (a kind the cluster does not know).
func (o FileObject) Fail(err error) FileObject {
	o.Entry.Action, o.Entry.Message = inject.Failed, err.Error()
	return o
}
