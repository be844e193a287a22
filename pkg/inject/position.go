package inject

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fieldError is an error about one field of an object, with where that
// field is in the text it was parsed from.
type fieldError struct {
	line, column int
	err          error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// atNode places err at node n: the report then points at n's line and
// column rather than at the document. A node made by the core (no line)
// leaves err as it is.
func atNode(n *yaml.Node, err error) error {
	if n == nil || n.Line == 0 || err == nil {
		return err
	}
	return &fieldError{line: n.Line, column: n.Column, err: err}
}

// errorPosition returns where err says its field is (0, 0 when it does
// not say).
func errorPosition(err error) (line, column int) {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.line, fe.column
	}
	return 0, 0
}
