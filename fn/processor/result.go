package processor

import (
	"strings"
)

// The result types of the KRM functions specification
// (config.kubernetes.io/v1 ResourceList.results). They are defined here
// rather than taken from kyaml's fn/framework, whose dependencies
// (kube-openapi validation, go-openapi strfmt, govalidator) run heavy
// package initializers on every start of the function.

// Severity is the severity of a Result.
type Severity string

const (
	// SeverityError makes the function exit non-zero.
	SeverityError Severity = "error"
	// SeverityWarning is a warning.
	SeverityWarning Severity = "warning"
	// SeverityInfo is informative.
	SeverityInfo Severity = "info"
)

// Result is one entry of ResourceList.results. The field order is the
// order of the YAML output.
type Result struct {
	Message     string            `yaml:"message,omitempty" json:"message,omitempty"`
	Severity    Severity          `yaml:"severity,omitempty" json:"severity,omitempty"`
	ResourceRef *ResourceRef      `yaml:"resourceRef,omitempty" json:"resourceRef,omitempty"`
	Field       *Field            `yaml:"field,omitempty" json:"field,omitempty"`
	File        *File             `yaml:"file,omitempty" json:"file,omitempty"`
	Tags        map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// ResourceRef identifies the resource a Result is about.
type ResourceRef struct {
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Name       string `yaml:"name,omitempty" json:"name,omitempty"`
	Namespace  string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
}

// Field names the field of a resource a Result is about.
type Field struct {
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
}

// File names the file (and the document in it) a resource came from.
type File struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Index int    `yaml:"index,omitempty" json:"index,omitempty"`
}

// String reads "[severity] apiVersion/kind/namespace/name field.path:
// message", leaving out what is empty (the format of kyaml's
// framework.Result).
func (r Result) String() string {
	var b strings.Builder
	severity := r.Severity
	if severity == "" {
		severity = SeverityInfo
	}
	b.WriteString("[" + string(severity) + "]")
	if ref := r.ResourceRef; ref != nil {
		var id []string
		for _, s := range []string{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name} {
			if s != "" {
				id = append(id, s)
			}
		}
		if len(id) > 0 {
			b.WriteString(" " + strings.Join(id, "/"))
		}
	}
	if r.Field != nil {
		b.WriteString(" " + r.Field.Path)
	}
	b.WriteString(": " + r.Message)
	return b.String()
}

// Results is a list of results; as an error, it is the error results.
type Results []*Result

// Error joins the results' strings with blank lines.
func (rs Results) Error() string {
	msgs := make([]string, len(rs))
	for i, r := range rs {
		msgs[i] = r.String()
	}
	return strings.Join(msgs, "\n\n")
}
