package admission

import (
	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// completionCheck is the core's refusal of a classic sidecar for a Pod
// that runs to completion (inject.MessageRunsToCompletion), as a check of
// the skip chain, or ok false when the template has no classic sidecar.
// At admission the Pod's restartPolicy is always set (the API server
// defaults it before any admission plugin runs), and a Job's Pods carry
// Never or OnFailure, so the Pod's own field says it all.
func (c *compiler) completionCheck() (chk check, ok bool) {
	sidecars := c.in.Template().ClassicSidecars()
	if sidecars == "" {
		return check{}, false
	}
	policies := make([]expr.Expr, len(inject.CompletingRestartPolicies))
	for i, p := range inject.CompletingRestartPolicies {
		policies[i] = expr.Str(p)
	}
	restartPolicy := expr.Field(spec, "restartPolicy")
	completes := expr.And(expr.Has(spec, "restartPolicy"), expr.In(restartPolicy, expr.List(policies...)))
	// The value is one of the two words: quoting it is wrapping it.
	msg := expr.Format(inject.MessageRunsToCompletion, expr.Str("spec.restartPolicy"),
		expr.Concat(expr.Str(`"`), restartPolicy, expr.Str(`"`)), expr.Str(sidecars))
	return check{completes, expr.Concat(expr.Str(string(inject.ReasonRunsToCompletion)+": "), msg)}, true
}
