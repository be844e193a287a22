package processor

import (
	"errors"
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// entryResult turns one report entry into a result. Objects that are not
// workloads at all (Services, ConfigMaps, the Kptfile) get none: they are
// not targets, and a result for each would bury the ones that matter.
func entryResult(e inject.Entry, item *yaml.RNode, names []string) *Result {
	if e.Action == inject.Skipped && e.Reason == inject.ReasonNotAWorkload {
		return nil
	}
	r := &Result{
		Message:  entryMessage(e, names),
		Severity: SeverityInfo,
		File:     fileOf(item),
	}
	if e.Action == inject.Failed {
		r.Severity = SeverityError
	}
	if e.Field != "" {
		r.Field = &Field{Path: e.Field}
	}
	if e.Kind != "" || e.Name != "" {
		r.ResourceRef = &ResourceRef{APIVersion: e.APIVersion, Kind: e.Kind, Name: e.Name, Namespace: e.Namespace}
	}
	return r
}

// entryMessage reads "injected envoy, envoy-conf", "skipped: not_opted_in:
// ..." or, for errors, "conflict: ...".
func entryMessage(e inject.Entry, names []string) string {
	var parts []string
	switch e.Action {
	case inject.Injected, inject.Updated:
		parts = append(parts, string(e.Action)+" "+strings.Join(names, ", "))
	case inject.Failed:
	default:
		parts = append(parts, string(e.Action))
	}
	if e.Reason != "" {
		parts = append(parts, string(e.Reason))
	}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	msg := strings.Join(parts, ": ")
	if e.Item >= 0 {
		msg = "item " + strconv.Itoa(e.Item) + " of the List: " + msg
	}
	if e.Line > 0 {
		// Where the field is in the function's input, in the words of the
		// YAML errors of the ResourceList ("yaml: line 5: ...").
		msg += fmt.Sprintf(" (line %d, column %d of the ResourceList)", e.Line, e.Column)
	}
	if e.Reformatted {
		msg += " (re-serialized: it could not be edited in place)"
	}
	return msg
}

// configResult reports an unusable function config.
func configResult(fc *yaml.RNode, err error) *Result {
	r := &Result{Message: err.Error(), Severity: SeverityError}
	var ce *config.FunctionError
	if errors.As(err, &ce) && ce.Field != "" {
		r.Field = &Field{Path: ce.Field}
	}
	if inject.ObjectKind(fc) != "" {
		r.ResourceRef = &ResourceRef{APIVersion: fc.GetApiVersion(), Kind: fc.GetKind(), Name: fc.GetName(), Namespace: fc.GetNamespace()}
		r.File = fileOf(fc)
	}
	return r
}

// fileOf reads the file an item came from out of its reader annotations
// (internal.config.kubernetes.io/path|index, or the legacy
// config.kubernetes.io/path|index).
func fileOf(item *yaml.RNode) *File {
	if inject.ObjectKind(item) == "" {
		return nil
	}
	a := item.GetAnnotations()
	path := first(a[kioutil.PathAnnotation], a[kioutil.LegacyPathAnnotation])
	if path == "" {
		return nil
	}
	index, _ := strconv.Atoi(first(a[kioutil.IndexAnnotation], a[kioutil.LegacyIndexAnnotation]))
	return &File{Path: path, Index: index}
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// itemResult is an informational result about a whole item, with its
// kind and name when it has them.
func itemResult(item *yaml.RNode, message string) *Result {
	r := &Result{Message: message, Severity: SeverityInfo, File: fileOf(item)}
	kind := inject.ObjectKind(item)
	namespace, name := inject.ObjectName(item)
	if kind != "" || name != "" {
		apiVersion := ""
		if n := item.Field("apiVersion"); n != nil && n.Value != nil {
			apiVersion = yaml.GetValue(n.Value)
		}
		r.ResourceRef = &ResourceRef{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: namespace}
	}
	return r
}
