// Package report words the injection core's report entries for people,
// the same way in every front end that edits files (kubectl inject --local
// and inject-fn's file mode): documents and List items counted from 1,
// objects named as kubectl names them ("deployment.apps/web"), and errors
// placed at the line and column of the file where an editor can jump to
// them: where YAML stops parsing, or the field an error is about (the
// core's Entry.Line and Column: containers that are not a list, a
// container of the sidecar's name, a port in use), with the reason code
// first, as a live object's line and the function's results give it.
//
// The core counts documents from 0 and knows only the text of one
// document; a manifest.Document knows where that text starts in its file,
// and Position combines the two.
package report
