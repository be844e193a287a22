package inject

import (
	"errors"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
)

// A parameter's expression is CEL over the pod template seen as a Pod
// (package podexpr: its subset evaluated there, the rest by cel-go in
// podexpr/celgo or kinject-cel); here its result becomes the parameter's
// value.

// errNoValue is an expression's null: the Pod gives no value.
var errNoValue = errors.New("no value")

// expressionPod is the pod template t as its expressions read it: without
// what own (the profile's record, nil when there is none) says was
// injected, so that an update computes what the first injection did.
func expressionPod(t *podTarget, own *profileRecord) *podexpr.Pod {
	pod := &podexpr.Pod{Meta: t.meta, Spec: t.spec}
	if own != nil {
		s := own.status
		pod.Own = &podexpr.Own{
			Items: map[string][]string{"containers": s.Containers, "initContainers": s.InitContainers, "volumes": s.Volumes},
			Keys:  map[string][]string{"labels": s.Labels, "annotations": append([]string{own.key}, s.Annotations...)},
		}
	}
	return pod
}

// expressionResult evaluates e over pod and returns the value as the
// parameter's type writes it: an int parameter takes a CEL int, the
// others a CEL string. null is errNoValue.
func expressionResult(e *podexpr.Expression, pod *podexpr.Pod, pt ParameterType) (string, error) {
	v, err := e.Eval(pod)
	if err != nil {
		return "", err
	}
	return expressionValue(v, pt)
}

// expressionValue is the parameter's value for an expression's result.
func expressionValue(v any, pt ParameterType) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", errNoValue
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
