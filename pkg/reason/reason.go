package reason

import (
	"fmt"
	"strings"
)

// Code is a stable snake_case code explaining a skip, an error or a step
// not taken. Codes appear in reports, KRM results, annotations and golden
// files, so they never change.
type Code string

// Giver is what reports a code.
type Giver string

// The givers, as the table of every reason names them.
const (
	// Core: the injection core, so every front end (the plugin on files
	// and live objects, the function, the Helm post-renderer) and, where
	// its row says, the admission policy.
	Core Giver = "core"
	// Live: the live commands (inject, uninject on the cluster's objects).
	Live Giver = "live"
	// Admission: the admission policy's binding, as explain reports it.
	Admission Giver = "admission"
	// Explain: kubectl inject explain.
	Explain Giver = "explain"
	// Restart: kubectl inject restart.
	Restart Giver = "restart"
	// Status: kubectl inject status.
	Status Giver = "status"
	// Size: kubectl inject size.
	Size Giver = "size"
)

// Row is one code of a table of reasons: who gives it, what becomes of
// the object, and when, in a sentence's words.
type Row struct {
	Code    Code
	By      []Giver
	Outcome string
	When    string
}

// NewRow is the row of code: a table of rows reads as one line per code.
func NewRow(code Code, by []Giver, outcome, when string) Row {
	return Row{Code: code, By: by, Outcome: outcome, When: when}
}

// Markdown is rows as the documentation's table shows them.
func Markdown(rows []Row) string {
	var b strings.Builder
	b.WriteString("| code | given by | outcome | when |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		by := make([]string, len(r.By))
		for i, g := range r.By {
			by[i] = string(g)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Code, strings.Join(by, ", "), r.Outcome, r.When)
	}
	return b.String()
}
