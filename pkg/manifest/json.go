package manifest

import "encoding/json"

// jsonValues finds, in a document being read, where one JSON value ends
// and the next begins, so that values written one after the other without
// a separator (jq's output: `{...}\n{...}\n`, or `{...}{...}`) are
// documents of their own. A YAML document never continues after a
// complete top-level flow collection with another one, so a cut there
// cannot split a document that YAML reads as one.
//
// It scans each byte once, as the document's lines arrive; a cut is made
// only after a value that encoding/json accepts, and only before an object
// or array. Anything else after a value (a comment, a key) ends the
// scanning, and the document is left whole for the parser to judge.
type jsonValues struct {
	state   jsonState
	depth   int
	quoted  bool // in a string
	escaped bool // after a backslash in a string
	start   int  // where the current value begins
	scanned int  // how much of the document has been scanned
}

type jsonState int

const (
	jsonBefore  jsonState = iota // before the first value: blanks and comment lines
	jsonComment                  // in a comment line before the first value
	jsonValue                    // in a value
	jsonBetween                  // after a complete value
	jsonOff                      // not a sequence of JSON values: no more cuts
)

// next scans doc from where the last call stopped and returns the offset
// at which the next value begins, or -1 when there is none yet. After a
// cut the caller passes the rest of the document (doc[cut:]) as doc.
func (v *jsonValues) next(doc []byte) int {
	for i := v.scanned; i < len(doc); i++ {
		c := doc[i]
		switch v.state {
		case jsonOff:
			v.scanned = len(doc)
			return -1
		case jsonComment:
			if c == '\n' {
				v.state = jsonBefore
			}
		case jsonBefore, jsonBetween:
			switch {
			case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			case c == '#' && v.state == jsonBefore:
				v.state = jsonComment
			case c == '{' || c == '[':
				if v.state == jsonBetween {
					// The scan goes on from the new value's first byte.
					v.state, v.depth, v.start, v.scanned = jsonValue, 0, i, i
					return i
				}
				v.state, v.depth, v.start = jsonValue, 1, i
			default:
				v.state = jsonOff
			}
		case jsonValue:
			v.scan(doc, i)
		}
	}
	v.scanned = len(doc)
	return -1
}

// scan takes byte i of a value.
func (v *jsonValues) scan(doc []byte, i int) {
	c := doc[i]
	switch {
	case v.escaped:
		v.escaped = false
	case v.quoted:
		switch c {
		case '\\':
			v.escaped = true
		case '"':
			v.quoted = false
		}
	case c == '"':
		v.quoted = true
	case c == '{' || c == '[':
		v.depth++
	case c == '}' || c == ']':
		if v.depth--; v.depth == 0 {
			v.state = jsonBetween
			if !json.Valid(doc[v.start : i+1]) {
				v.state = jsonOff
			}
		}
	}
}

// cut makes the scanner continue on the rest of the document after the
// first at bytes went out as a document of their own.
func (v *jsonValues) cut(at int) {
	v.scanned -= at
	v.start -= at
}
