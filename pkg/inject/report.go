package inject

import (
	"fmt"
	"strings"
)

// Entry reports the outcome for one object (one document, or one item of a
// kind: List).
type Entry struct {
	// Document is the 0-based index of the document in its stream.
	Document int `json:"document"`
	// Item is the 0-based index inside a kind: List, or -1.
	Item       int    `json:"item"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	Action     Action `json:"action"`
	Reason     Reason `json:"reason,omitempty"`
	Message    string `json:"message,omitempty"`
	// Field is the path of the field an error is about
	// ("spec.template.spec.containers"), when the error is about one.
	Field string `json:"field,omitempty"`
	// Line and Column are where the field an error is about lies (both
	// 1-based): in the document's text for ProcessText, in the text the
	// node was parsed from for ProcessNode. 0 when the error is about the
	// object as a whole, or its field has no position.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Reformatted is true when the document could not be edited in place
	// (for example a flow-style containers list) and was re-serialized.
	Reformatted bool `json:"reformatted,omitempty"`
}

// Changed reports whether the entry's object was modified.
func (e Entry) Changed() bool {
	return e.Action == Injected || e.Action == Updated || e.Action == Uninjected
}

// Object names the entry's object the way kubectl does ("Deployment
// default/web"), falling back to the document position when unnamed.
func (e Entry) Object() string {
	var b strings.Builder
	if e.Kind != "" {
		b.WriteString(e.Kind)
	} else {
		b.WriteString("object")
	}
	switch {
	case e.Namespace != "" && e.Name != "":
		fmt.Fprintf(&b, " %s/%s", e.Namespace, e.Name)
	case e.Name != "":
		fmt.Fprintf(&b, " %s", e.Name)
	}
	return b.String()
}

// Location names where the entry's object is in its stream.
func (e Entry) Location() string {
	if e.Item >= 0 {
		return fmt.Sprintf("document %d, item %d", e.Document, e.Item)
	}
	return fmt.Sprintf("document %d", e.Document)
}

// String renders the entry as one line: "Deployment default/web (document 0): injected".
func (e Entry) String() string {
	s := fmt.Sprintf("%s (%s): %s", e.Object(), e.Location(), e.Action)
	if e.Reason != "" {
		s += ": " + string(e.Reason)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Reformatted {
		s += " (document re-serialized: it could not be edited in place)"
	}
	return s
}

// Report is the outcome for every object of a stream, in input order.
type Report []Entry

// Failed reports whether any entry is an error.
func (r Report) Failed() bool {
	for _, e := range r {
		if e.Action == Failed {
			return true
		}
	}
	return false
}

// Changed reports whether any entry modified its object.
func (r Report) Changed() bool {
	for _, e := range r {
		if e.Changed() {
			return true
		}
	}
	return false
}

// Errors returns the error entries.
func (r Report) Errors() []Entry {
	var out []Entry
	for _, e := range r {
		if e.Action == Failed {
			out = append(out, e)
		}
	}
	return out
}
