package template

import (
	"errors"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
)

// A parameter's expression is CEL over the pod template seen as a Pod
// (package podexpr: its subset evaluated there, the rest by cel-go in
// podexpr/celgo or kinject-cel); here its result becomes the parameter's
// value.

// ErrNoValue is an expression's null: the Pod gives no value.
var ErrNoValue = errors.New("no value")

// Computed reports whether the parameter has an expression.
func (p Parameter) Computed() bool { return p.expr != nil }

// Compute evaluates the parameter's expression over pod and returns the
// value as the parameter's type writes it: an int parameter takes a CEL
// int, the others a CEL string. null is ErrNoValue.
func (p Parameter) Compute(pod *podexpr.Pod) (string, error) {
	v, err := p.expr.Eval(pod)
	if err != nil {
		return "", err
	}
	return expressionValue(v, p.Type)
}

// expressionValue is the parameter's value for an expression's result.
func expressionValue(v any, pt ParameterType) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", ErrNoValue
	case int64:
		if pt.Integer() {
			s := strconv.FormatInt(v, 10)
			// Any int is an int; a port must be in range (the policy
			// checks the same pattern).
			if pt == TypePort {
				if err := pt.Check(s); err != nil {
					return "", err
				}
			}
			return s, nil
		}
	case string:
		if !pt.Integer() {
			if err := pt.Check(v); err != nil {
				return "", err
			}
			return v, nil
		}
	}
	return "", errors.New(ExpressionTypeError(pt))
}

// ExpressionTypeError is the message of an expression that gives a value
// of another type than a parameter of type pt takes.
func ExpressionTypeError(pt ParameterType) string {
	if pt.Integer() {
		return "does not give an int (or null)"
	}
	return "does not give a string (or null)"
}
