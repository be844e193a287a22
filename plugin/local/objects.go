package local

import (
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
	"github.com/kinject/kubectl-inject/pkg/report"
)

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
}

// Line words o's entry as --local reports it: an error where it is in the
// file ("app.yaml:18:16: document 2 error: not valid YAML: ..."), or a skip
// with the file's name ("app.yaml: document 1 skipped: not_kubernetes").
func (o FileObject) Line() string {
	if o.Entry.Action == inject.Failed {
		return report.Error(o.File, o.Document, o.Entry)
	}
	return reportLine(o.File, true, o.Document, o.Entry, printed)
}

// Fail returns o as an object that failed with err, for an error found
// after reading (a kind the cluster does not know).
func (o FileObject) Fail(err error) FileObject {
	o.Entry.Action, o.Entry.Message = inject.Failed, err.Error()
	return o
}

// ReadObjects reads the -f inputs as Run does (files, directories, -R,
// URLs, stdin from in; the documents as manifest splits them and
// inject.ParseDocument parses them) and calls fn with every object, in
// order: each of a List's items, and every document that is not an object
// as a failed (or skipped) FileObject, so that none is passed over. The
// error is about an input as a whole: a file that is missing or cannot be
// read.
func (f *Flags) ReadObjects(in io.Reader, fn func(FileObject)) error {
	files, err := f.localFiles()
	if err != nil {
		return err
	}
	s := Streams{In: in}
	for _, file := range files {
		input, closeIn, err := s.open(file)
		if err != nil {
			return err
		}
		src := &errReader{r: input}
		err = manifest.ProcessDocuments(src, io.Discard, func(d manifest.Document) []byte {
			for _, e := range documentObjects(d, file.walked) {
				fn(FileObject{File: file.name, Document: d, Entry: e.entry, Labels: e.labels})
			}
			return nil
		})
		closeIn()
		if err := fileError(file.name, src.err, err); err != nil {
			return err
		}
	}
	return nil
}

// fileObject is one object of a document, as documentObjects finds it.
type fileObject struct {
	entry  inject.Entry
	labels map[string]string
}

// documentObjects reads document d as the injection core does
// (inject.Objects) and names its objects: the document's, or each item's
// of a List. A document in a walked directory that is not a Kubernetes
// object (a CI workflow) is skipped, as Run skips it.
func documentObjects(d manifest.Document, walked bool) []fileObject {
	objs, failed := inject.Objects(d.Text, d.Index)
	if failed != nil {
		return []fileObject{{entry: *failed}}
	}
	out := make([]fileObject, len(objs))
	for i, o := range objs {
		out[i] = identify(o.Node, d.Index, o.Item, walked)
	}
	return out
}

// identify names one object (item is its index in a List, or -1) and
// checks that it can be looked up: a mapping with apiVersion, kind and a
// name.
func identify(obj *yaml.RNode, doc, item int, walked bool) fileObject {
	ns, name := inject.ObjectName(obj)
	e := inject.Entry{Document: doc, Item: item, Kind: inject.ObjectKind(obj), Namespace: ns, Name: name}
	if v, err := obj.Pipe(yaml.Get("apiVersion")); err == nil && v != nil && v.YNode().Kind == yaml.ScalarNode {
		e.APIVersion = v.YNode().Value
	}
	fail := func(reason inject.Reason, msg string) fileObject {
		e.Action, e.Reason, e.Message = inject.Failed, reason, msg
		return fileObject{entry: e}
	}
	switch {
	case obj.YNode().Kind != yaml.MappingNode:
		return fail(inject.ReasonNotAnObject, fmt.Sprintf("item is %s, not an object", inject.DescribeNonObject(obj.YNode())))
	case e.Kind == "" && e.APIVersion == "":
		if walked {
			e.Action, e.Reason = inject.Skipped, inject.ReasonNotKubernetes
			return fileObject{entry: e}
		}
		return fail(inject.ReasonNotKubernetes, "neither apiVersion nor kind: not a Kubernetes object")
	case e.APIVersion == "":
		return fail(inject.ReasonInvalidObject, "apiVersion: is required")
	case e.Kind == "":
		return fail(inject.ReasonInvalidObject, "kind: is required")
	}
	if err := inject.CheckObjectShape(obj); err != nil {
		return fail(inject.ReasonInvalidObject, err.Error())
	}
	if name == "" {
		return fail(inject.ReasonInvalidObject, "metadata.name: is required to find the object in the cluster")
	}
	return fileObject{entry: e, labels: obj.GetLabels()}
}
