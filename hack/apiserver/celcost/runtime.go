package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers the Pod defaulting functions
)

// admissionInput is what the API server's evaluator gets for a Pod CREATE.
type admissionInput struct {
	attr      *admission.VersionedAttributes
	request   *admissionv1.AdmissionRequest
	namespace *corev1.Namespace
	describe  string
}

// readPod reads a Pod, applies the API server's defaults (as decoding a
// create request does, before admission) and builds the attributes of its
// creation.
func readPod(path string) (*admissionInput, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pod := &corev1.Pod{}
	if err := k8syaml.NewYAMLOrJSONDecoder(f, 4096).Decode(pod); err != nil {
		return nil, fmt.Errorf("reading the Pod %s: %w", path, err)
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	legacyscheme.Scheme.Default(pod)
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	userInfo := &user.DefaultInfo{Name: "kubernetes-admin", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	attr := admission.NewAttributesRecord(pod, nil, gvk, pod.Namespace, pod.Name, gvr, "", admission.Create, &metav1.CreateOptions{}, false, userInfo)
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(pod)}
	req := plugincel.CreateAdmissionRequest(attr, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	describe := fmt.Sprintf("Pod %s/%s (%d container(s): %s; %d label(s), %d annotation(s)), defaulted", pod.Namespace, pod.Name, len(pod.Spec.Containers), strings.Join(names, ", "), len(pod.Labels), len(pod.Annotations))
	return &admissionInput{attr: va, request: req, namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.Namespace}}, describe: describe}, nil
}

// evaluate runs every expression of the policy on the Pod with the API
// server's own compiler and evaluator (plugin/cel.NewCompositedCompiler,
// ForInput), as the mutating and validating dispatchers do, records the
// cost of each in exprs and returns the totals of one admission.
func (p policyExprs) evaluate(compat *utilversion.Version, in *admissionInput, exprs []Expression) ([]Total, error) {
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(compat))
	if err != nil {
		return nil, err
	}
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.paramKind, HasAuthorizer: true}
	vars := make([]plugincel.NamedExpressionAccessor, len(p.variables))
	for i, v := range p.variables {
		vars[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(vars, opts, environment.StoredExpressions)
	byPath := map[string]*Expression{}
	for i := range exprs {
		byPath[exprs[i].Field] = &exprs[i]
	}
	record := func(path string, r Runtime) {
		if e, ok := byPath[path]; ok {
			e.Runtime = &r
		}
	}
	conditions := func(accessors []plugincel.ExpressionAccessor, o plugincel.OptionalVariableDeclarations, budget int64) ([]Runtime, int64) {
		// Each alone, then all together (one evaluation, as the server
		// evaluates a list of conditions: variables once).
		out := make([]Runtime, len(accessors))
		for i, a := range accessors {
			rs, cost := evalConditions(compiler, []plugincel.ExpressionAccessor{a}, o, in, budget)
			out[i] = rs[0]
			out[i].Cost = cost
		}
		_, total := evalConditions(compiler, accessors, o, in, budget)
		return out, total
	}
	var totals []Total
	// match conditions: one evaluation, their own budget
	if len(p.matchConditions) > 0 {
		accessors := make([]plugincel.ExpressionAccessor, len(p.matchConditions))
		for i := range p.matchConditions {
			accessors[i] = (*matchconditions.MatchCondition)(&p.matchConditions[i])
		}
		rs, total := conditions(accessors, opts, celconfig.RuntimeCELCostBudgetMatchConditions)
		for i, m := range p.matchConditions {
			record(fmt.Sprintf("spec.matchConditions[%d] (%s)", i, m.Name), rs[i])
		}
		totals = append(totals, Total{Policy: p.name, What: "matchConditions", Cost: total, Budget: celconfig.RuntimeCELCostBudgetMatchConditions})
	}
	// variables: `variables.NAME` alone
	for i, v := range p.variables {
		rs, cost := evalConditions(compiler, []plugincel.ExpressionAccessor{anyExpr("variables." + v.Name)}, opts, in, celconfig.RuntimeCELCostBudget)
		r := rs[0]
		r.Cost = cost
		record(fmt.Sprintf("spec.variables[%d] (%s)", i, v.Name), r)
	}
	// mutations: one composition context for all, as the dispatcher does
	if len(p.patches) > 0 {
		patchOpts := opts
		patchOpts.HasPatchTypes = true
		ctx := compiler.CreateContext(context.Background())
		budget := int64(celconfig.RuntimeCELCostBudget)
		var total int64
		for _, f := range p.patches {
			var accessor plugincel.ExpressionAccessor = &patch.JSONPatchCondition{Expression: f.expr}
			if f.role == roleApplyConf {
				accessor = &patch.ApplyConfigurationCondition{Expression: f.expr}
			}
			ev := compiler.CompileMutatingEvaluator(accessor, patchOpts, environment.StoredExpressions)
			res, remaining, err := ev.ForInput(ctx, in.attr, in.request, plugincel.OptionalVariableBindings{}, in.namespace, budget)
			r := Runtime{Cost: budget - remaining}
			if err != nil {
				r.Error = err.Error()
			} else if res.Error != nil {
				r.Error = res.Error.Error()
			} else {
				r.Result = summarize(res.EvalResult)
			}
			record(f.path, r)
			total += r.Cost
			budget = remaining
		}
		totals = append(totals, Total{Policy: p.name, What: "variables + mutations", Cost: total, Budget: celconfig.RuntimeCELCostBudget})
	}
	// validations (and audit annotations) together; message expressions
	// only run for a failed validation, each alone
	var vals []plugincel.ExpressionAccessor
	var valPaths []string
	for _, f := range p.conditions {
		switch f.role {
		case roleValidation:
			vals = append(vals, &validating.ValidationCondition{Expression: f.expr})
			valPaths = append(valPaths, f.path)
		case roleAudit:
			vals = append(vals, anyExpr(f.expr))
			valPaths = append(valPaths, f.path)
		case roleMessage:
			msgOpts := opts
			msgOpts.HasAuthorizer = false
			rs, cost := evalConditions(compiler, []plugincel.ExpressionAccessor{&validating.MessageExpressionCondition{MessageExpression: f.expr}}, msgOpts, in, celconfig.RuntimeCELCostBudget)
			r := rs[0]
			r.Cost = cost
			record(f.path, r)
		}
	}
	if len(vals) > 0 {
		rs, total := conditions(vals, opts, celconfig.RuntimeCELCostBudget)
		for i := range rs {
			record(valPaths[i], rs[i])
		}
		totals = append(totals, Total{Policy: p.name, What: "variables + validations", Cost: total, Budget: celconfig.RuntimeCELCostBudget})
	}
	return totals, nil
}

// evalConditions evaluates the accessors in one ForInput (one composition
// context: each variable is evaluated at most once) and returns each one's
// result and the cost of the whole evaluation.
func evalConditions(compiler *plugincel.CompositedCompiler, accessors []plugincel.ExpressionAccessor, opts plugincel.OptionalVariableDeclarations, in *admissionInput, budget int64) ([]Runtime, int64) {
	ev := compiler.CompileCondition(accessors, opts, environment.StoredExpressions)
	out := make([]Runtime, len(accessors))
	res, remaining, err := ev.ForInput(context.Background(), in.attr, in.request, plugincel.OptionalVariableBindings{}, in.namespace, budget)
	if err != nil {
		for i := range out {
			out[i].Error = err.Error()
		}
		return out, budget - remaining
	}
	for i, r := range res {
		if i >= len(out) {
			break
		}
		if r.Error != nil {
			out[i].Error = r.Error.Error()
		} else {
			out[i].Result = summarize(r.EvalResult)
		}
	}
	return out, budget - remaining
}

// summarize is a short form of a CEL value for the report.
func summarize(v ref.Val) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "null"
	case types.String:
		s = strconv.Quote(string(x))
	case traits.Lister:
		if _, ok := x.Get(types.Int(0)).(*types.Err); ok || x.Size() == types.Int(0) {
			s = fmt.Sprint(x.Value())
		} else if elem, ok := x.Get(types.Int(0)).(ref.Val); ok && elem.Type().TypeName() == "JSONPatch" {
			s = fmt.Sprintf("%d JSONPatch operations", x.Size())
		} else {
			s = fmt.Sprint(x.Value())
		}
	default:
		s = fmt.Sprint(v.Value())
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// anyExpr is an expression of any type.
type anyExpr string

// GetExpression is the expression.
func (a anyExpr) GetExpression() string { return string(a) }

// ReturnTypes allows any type.
func (a anyExpr) ReturnTypes() []*cel.Type { return []*cel.Type{cel.AnyType} }
