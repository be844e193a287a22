package local

import (
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// ReadObjects reads the -f inputs as Run does (files, directories, -R,
// URLs, stdin from in; the documents as manifest splits them and
// inject.ParseDocument parses them) and calls fn with every object, in
// order: each of a List's items, and every document that is not an object
// as a failed (or skipped) FileObject, so that none is passed over. The
// error is about an input as a whole: a file that is missing or cannot be
// read.
func (fe FrontEnd) ReadObjects(f *config.Flags, in io.Reader, fn func(config.FileObject)) error {
	files, err := fe.localFiles(f)
	if err != nil {
		return err
	}
	s := config.Streams{In: in}
	for _, file := range files {
		input, closeIn, err := open(s, file)
		if err != nil {
			return err
		}
		src := &errReader{r: input}
		err = manifest.ProcessDocuments(src, io.Discard, func(d manifest.Document) []byte {
			for _, e := range documentObjects(d, file.walked) {
				obj := config.FileObject{File: file.name, Document: d, Entry: e.entry, Labels: e.labels}
				if e.entry.Action == inject.Skipped {
					obj.Skip = reportLine(file.name, true, d, e.entry, printed)
				}
				fn(obj)
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
