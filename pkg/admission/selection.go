package admission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// namespaceLabel is the label the API server sets on every namespace to its
// own name, so a namespace list becomes a namespace selector.
const namespaceLabel = "kubernetes.io/metadata.name"

// checkKinds refuses a policy whose kinds or API groups leave out Pods: the
// admission policy injects Pods and nothing else.
func checkKinds(p inject.Policy) error {
	if !p.SelectsKind("Pod") {
		return fmt.Errorf("kinds: %s leaves out Pod, and the admission policy injects only Pods (controllers' pod templates stay as they are in git)", strings.Join(p.Kinds, ","))
	}
	if !p.SelectsAPIGroup("") {
		return fmt.Errorf("apiGroups: %s leaves out the core group of Pods", strings.Join(p.APIGroups, ","))
	}
	return nil
}

// bindingMatch turns the policy's namespaces and label selector into the
// binding's match resources: the API server then skips other Pods before
// any CEL runs, as the core skips them with namespace_not_selected and
// labels_not_selected.
//
// Admission is opt-in per namespace: without a list of namespaces, the
// binding matches only namespaces labelled NamespaceLabelFor(profile)=
// enabled (kubectl inject enable). A list of namespaces selects them by
// name instead, labelled or not. The system namespaces are left out of
// every binding unless the list names them; ExcludeNamespaces are always
// left out.
func bindingMatch(p inject.Policy, profile string) (*matchResources, error) {
	var terms []selectorTerm
	excluded := lowerAll(p.ExcludeNamespaces)
	if len(p.Namespaces) > 0 {
		terms = append(terms, selectorTerm{Key: namespaceLabel, Operator: "In", Values: uniqueSorted(lowerAll(p.Namespaces))})
	} else {
		terms = append(terms, selectorTerm{Key: naming.NamespaceLabelFor(profile), Operator: "In", Values: []string{naming.NamespaceEnabled}})
		excluded = append(excluded, inject.SystemNamespaces()...)
	}
	if excluded = uniqueSorted(excluded); len(excluded) > 0 {
		terms = append(terms, selectorTerm{Key: namespaceLabel, Operator: "NotIn", Values: excluded})
	}
	m := &matchResources{NamespaceSelector: &labelSelector{MatchExpressions: terms}}
	if p.Selector != "" {
		sel, err := objectSelector(p.Selector)
		if err != nil {
			return nil, err
		}
		m.ObjectSelector = sel
	}
	return m, nil
}

// NamedSystemNamespaces returns the system namespaces that a policy's
// namespace list names: the policy injects them, and the front ends warn.
func NamedSystemNamespaces(p inject.Policy) []string {
	var out []string
	for _, ns := range uniqueSorted(lowerAll(p.Namespaces)) {
		if inject.IsSystemNamespace(ns) && !p.ExcludesNamespace(ns) {
			out = append(out, ns)
		}
	}
	return out
}

func lowerAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(s)
	}
	return out
}

// uniqueSorted sorts list and drops repeated values.
func uniqueSorted(list []string) []string {
	slices.Sort(list)
	return slices.Compact(list)
}

// objectSelector converts a label selector string (kubectl's -l syntax) to
// the structured form of an admission binding.
func objectSelector(s string) (*labelSelector, error) {
	reqs, err := parseLabelSelector(s)
	if err != nil {
		return nil, fmt.Errorf("selector: %q: %w", s, err)
	}
	out := &labelSelector{}
	for _, r := range reqs {
		term := selectorTerm{Key: r.key, Values: r.values}
		switch r.op {
		case "=", "==", "in":
			term.Operator = "In"
		case "!=", "notin":
			term.Operator = "NotIn"
		case "exists":
			term.Operator = "Exists"
		case "!exists":
			term.Operator = "DoesNotExist"
		default:
			return nil, fmt.Errorf("selector: %q: operator %s has no equivalent in an admission binding (use =, !=, in, notin, KEY or !KEY)", s, r.op)
		}
		out.MatchExpressions = append(out.MatchExpressions, term)
	}
	return out, nil
}

// matchConditions are the status check and the core's pod-level skips
// (inject.Policy.PodSkips, which the core evaluates itself) as CEL: a Pod
// for which any is false is left as created. They use
// the profile's own status and inject annotations; the seed's annotation
// opts in the default profile only, as in the core. Other profiles'
// records do not stop the policy: they are handled by the variables.
// allContainers is the variable of the Pod's containers and init
// containers.
func matchConditions(p inject.Policy, profile string, allContainers expr.Expr) []matchCondition {
	conds := []matchCondition{
		{"not-injected", expr.Or(expr.Not(expr.Has(metadata, "annotations")),
			expr.Not(expr.In(expr.Str(naming.StatusAnnotationFor(profile)), annotations))), ""},
	}
	for _, s := range p.PodSkips(profile) {
		conds = append(conds, matchCondition{s.Name, expr.Not(holds(s.When, allContainers)), s.Reason})
	}
	return conds
}

// holds is the pod condition c of the core (pkg/inject's PodSkips) as
// CEL on the Pod, with the core's meaning for each kind of condition.
func holds(c inject.PodCondition, allContainers expr.Expr) expr.Expr {
	switch c := c.(type) {
	case inject.AnnotationIs:
		return expr.Eq(expr.Method(annotation(c.Key), "lowerAscii"), expr.Str(strings.ToLower(c.Value)))
	case inject.HasPodAnnotation:
		return expr.And(expr.Has(metadata, "annotations"), expr.In(expr.Str(c.Key), annotations))
	case inject.SpecIsTrue:
		return expr.And(expr.Has(spec, c.Field), expr.Field(spec, c.Field))
	case inject.HasContainer:
		return namedIn(allContainers, c.Names)
	case inject.AnyOf:
		each := make([]expr.Expr, len(c))
		for i, x := range c {
			each[i] = holds(x, allContainers)
		}
		return expr.Or(each...)
	case inject.Not:
		return expr.Not(holds(c.Of, allContainers))
	}
	panic(fmt.Sprintf("admission: no CEL for the pod condition %T", c))
}

// namedIn is true when the list of containers holds one named one of
// names.
func namedIn(containers expr.Expr, names []string) expr.Expr {
	quoted := make([]expr.Expr, len(names))
	for i, n := range names {
		quoted[i] = expr.Str(n)
	}
	c := expr.Ident("c")
	return expr.Method(containers, "exists", c, expr.In(expr.Field(c, "name"), expr.List(quoted...)))
}

// matchCondition is one of the conditions a Pod meets to be injected,
// and the core's reason for a Pod that fails it.
type matchCondition struct {
	name   string
	cond   expr.Expr
	reason inject.Reason
}

// policyConditions are conds as a policy's match conditions.
func policyConditions(conds []matchCondition) []namedCondition {
	out := make([]namedCondition, len(conds))
	for i, c := range conds {
		out[i] = namedCondition{Name: c.name, Expression: expr.Pretty(c.cond)}
	}
	return out
}

// MarkReason splits a skip mark (the value of the skip annotation the
// policy writes) into its reason code and the core's message, which the
// mark of a refusal or a conflict carries after ": ".
func MarkReason(mark string) (code, message string) {
	code, message, _ = strings.Cut(mark, ": ")
	return code, message
}
