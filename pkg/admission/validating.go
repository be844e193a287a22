package admission

import (
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// refusedReasons are the reason codes of a Pod the core refuses (a
// conflict, a record or an override value it cannot take, a classic
// sidecar in a Pod that runs to completion): the mutating
// policy writes them with the core's message after the code.
var refusedReasons = inject.ReasonsAtAdmission(inject.AdmissionRefused)

// markCheck is the validating policy's check, its message and its
// variables. It runs after every mutation and reads what the mutating
// policy decided from the Pod, instead of deriving it again:
//
//   - a Pod injected (its status record) is not matched at all;
//   - a Pod marked with a skip reason passes, unless the mark is a
//     refusal or a conflict: then the warning is the message the mark
//     carries;
//   - a Pod with no mark that the mutating policy reaches was not
//     mutated at all: the policy's parameter (gate) is missing from the
//     namespace, or the mutating policy failed on it (its failure policy
//     is Ignore). Both are said. A Pod that did not opt in (opt-in mode)
//     is left without a mark and passes.
func (c *compiler) markCheck(conds []matchCondition, policyName string, gate *template.Reference) (check, message expr.Expr, vars []variable) {
	mark := expr.Var("mark")
	vars = []variable{{name: "mark", comment: "what the mutating policy wrote on the Pod it left alone (" + naming.SkippedAnnotationFor(c.profile) + "), or \"\"",
		value: annotation(naming.SkippedAnnotationFor(c.profile))}}
	codes := make([]string, len(refusedReasons))
	for i, r := range refusedReasons {
		codes[i] = string(r)
	}
	refused := expr.Method(mark, "matches", expr.Str("^("+strings.Join(codes, "|")+"): "))
	check = expr.And(expr.Ne(mark, expr.Str("")), expr.Not(refused))
	for _, mc := range conds {
		if mc.reason == inject.ReasonNotOptedIn {
			check = expr.Cond(expr.Eq(mark, expr.Str("")), expr.Not(mc.cond), expr.Not(refused))
		}
	}
	noMark := expr.Str("the policy left no reason on the Pod: it failed on it (kubectl inject explain names the error)")
	if gate != nil {
		noMark = expr.Concat(expr.Str("the sidecar needs "+gate.String()+" ("+gate.Field+"), and namespace "),
			expr.Select(expr.Ident("request"), "namespace"), expr.Str(" has none (create it there; kubectl inject check lists what each enabled namespace lacks)"))
	}
	reason := expr.Method(mark, "substring", expr.Concat(expr.Method(mark, "indexOf", expr.Str(": ")), expr.Int(2)))
	message = expr.Concat(expr.Str("sidecar not injected by "+policyName+": "), expr.Cond(expr.Eq(mark, expr.Str("")), noMark, reason))
	return check, message, vars
}
