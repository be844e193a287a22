package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// lineRef is how the core gives a line of the document in a message
// ("duplicate key (line 10)"), compiled on first use.
var lineRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` \(line ([0-9]+)\)$`) })

// Position returns where the error entry e of document d lies in the
// document's file, and its message reworded for that place: a YAML syntax
// error at the line and column of the problem, a message that names a line
// of the document at that line of the file, anything else at the line where
// the document's content begins; an error about a field (e.Line) at that
// field's line and column. column is 0 when not known.
func Position(d manifest.Document, e inject.Entry) (line, column int, message string) {
	line, message = d.ContentLine(), e.Message
	if e.Reason == inject.ReasonInvalidYAML {
		if se := d.SyntaxError(); se != nil {
			return se.Line, se.Column, "not valid YAML: " + se.Error()
		}
		return line, 0, message
	}
	if e.Line > 0 {
		return d.LineOf(e.Line), e.Column, message
	}
	if m := lineRef().FindStringSubmatch(message); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return d.LineOf(n), 0, strings.TrimSuffix(message, m[0])
		}
	}
	return line, 0, message
}

// Where renders a position the way compilers do: "app.yaml:12:" or
// "app.yaml:12:7:". Standard input ("-") is named STDIN, as kubectl
// names it.
func Where(file string, line, column int) string {
	if file == "-" || file == "" {
		file = "STDIN"
	}
	if column > 0 {
		return fmt.Sprintf("%s:%d:%d:", file, line, column)
	}
	return fmt.Sprintf("%s:%d:", file, line)
}

// Location names where e's object is in its stream, counting documents and
// List items from 1: "document 2", "document 2, item 3".
func Location(e inject.Entry) string {
	if e.Item >= 0 {
		return fmt.Sprintf("document %d, item %d", e.Document+1, e.Item+1)
	}
	return fmt.Sprintf("document %d", e.Document+1)
}

// Object names e's object as kubectl does from its apiVersion, kind and
// name ("deployment.apps/web"), or by its Location when it has no kind or
// no name.
func Object(e inject.Entry) string {
	if e.Kind == "" || e.Name == "" {
		return Location(e)
	}
	ref := strings.ToLower(e.Kind)
	if g, _, ok := strings.Cut(e.APIVersion, "/"); ok {
		ref += "." + g
	}
	return ref + "/" + e.Name
}

// Error renders the error entry e of document d of file as one line, its
// reason code first as live objects' lines and the function's results
// give it, so every front end words a refusal the same way:
//
//	app.yaml:14: deployment.apps/web error: invalid_object: spec.template.spec.containers: must be a list (document 2)
//	app.yaml:9:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content
func Error(file string, d manifest.Document, e inject.Entry) string {
	line, column, msg := Position(d, e)
	msg = Reasoned(e.Reason, msg)
	where := Where(file, line, column)
	if e.Kind != "" && e.Name != "" {
		return fmt.Sprintf("%s %s error: %s (%s)", where, Object(e), msg, Location(e))
	}
	return fmt.Sprintf("%s %s error: %s", where, Location(e), msg)
}

// Reasoned puts reason before msg ("runs_to_completion: spec.restartPolicy:
// ..."), unless msg already starts with it, by the rule of a live object's
// line (live.Result.String).
func Reasoned(reason inject.Reason, msg string) string {
	if reason == "" || strings.HasPrefix(msg, string(reason)) {
		return msg
	}
	return string(reason) + ": " + msg
}
