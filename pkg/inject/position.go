package inject

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fieldError is an error about one field of an object (its path, as the
// message names it), with where that field is in the text it was parsed
// from.
type fieldError struct {
	field        string
	line, column int
	err          error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// atNode places err, about the field at path field, at node n: the report
// then points at n's line and column rather than at the document. A node
// made by the core (no line) still names the field.
func atNode(n *yaml.Node, field string, err error) error {
	if err == nil {
		return nil
	}
	fe := &fieldError{field: field, err: err}
	if n != nil {
		fe.line, fe.column = n.Line, n.Column
	}
	return fe
}

// errorPosition returns the field err is about and where it is ("", 0, 0
// when err does not say).
func errorPosition(err error) (field string, line, column int) {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.field, fe.line, fe.column
	}
	return "", 0, 0
}
