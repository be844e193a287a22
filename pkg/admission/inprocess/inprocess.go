// Package inprocess runs a compiled admission policy on a Pod with the
// API server's own admission machinery (k8s.io/apiserver), in the
// process: kubectl inject explain and the comparison tests ask it what the
// cluster would do, without a cluster.
package inprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// The API server's admission machinery for policies (k8s.io/apiserver),
// run on a Pod in-process: the compilers, match conditions, JSON patchers
// and validator that the MutatingAdmissionPolicy and
// ValidatingAdmissionPolicy plugins build for each policy, set up as
// those plugins' compilePolicy functions set them up (unexported there).
// What the API server does around them (decoding and defaulting the Pod,
// namespace and object selectors) is left out: the Pods are taken as
// written, and the caller picks the Pods the binding selects.

var (
	podGVK = corev1.SchemeGroupVersion.WithKind("Pod")
	podGVR = corev1.SchemeGroupVersion.WithResource("pods")
)

// Policy is a compiled policy's mutating and validating halves as
// the API server's plugins hold them.
type Policy struct {
	name      string
	compiler  *plugincel.CompositedCompiler
	matcher   matchconditions.Matcher
	patchers  []patch.Patcher
	validator validating.Validator
	hasParams bool
	// ignores: the mutating policy's failurePolicy is Ignore, so that an
	// error of its mutation leaves the Pod as created.
	ignores    bool
	interfaces admission.ObjectInterfaces
}

// Load compiles a policy's objects (the mutating policy
// first, the validating one third) with the API server's compilers.
func Load(objs [][]byte) (*Policy, error) {
	var err error
	var mp admissionregistrationv1.MutatingAdmissionPolicy
	var vp admissionregistrationv1.ValidatingAdmissionPolicy
	if err := json.Unmarshal(objs[0], &mp); err != nil {
		return nil, fmt.Errorf("reading the mutating policy: %w", err)
	}
	if err := json.Unmarshal(objs[2], &vp); err != nil {
		return nil, fmt.Errorf("reading the validating policy: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	sp := &Policy{name: mp.Name, hasParams: mp.Spec.ParamKind != nil, interfaces: admission.NewObjectInterfacesFromScheme(scheme),
		ignores: mp.Spec.FailurePolicy != nil && *mp.Spec.FailurePolicy == admissionregistrationv1.Ignore}

	// The mutating policy (mutating/compilation.go).
	opts := plugincel.OptionalVariableDeclarations{HasParams: sp.hasParams, HasAuthorizer: true}
	sp.compiler, err = plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, err
	}
	sp.compiler.CompileAndStoreVariables(variables(mp.Spec.Variables), opts, environment.StoredExpressions)
	sp.matcher = matcherOf(sp.compiler, mp.Spec.MatchConditions, opts, mp.Spec.FailurePolicy, mp.Name)
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	for i, m := range mp.Spec.Mutations {
		var ev plugincel.MutatingEvaluator
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			ev = sp.compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOpts, environment.StoredExpressions)
			sp.patchers = append(sp.patchers, patch.NewJSONPatcher(ev))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			ev = sp.compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchOpts, environment.StoredExpressions)
			sp.patchers = append(sp.patchers, patch.NewApplyConfigurationPatcher(ev))
		default:
			return nil, fmt.Errorf("mutation %d: patch type %s", i, m.PatchType)
		}
		if errs := ev.CompilationErrors(); len(errs) > 0 {
			return nil, fmt.Errorf("mutation %d: %w", i, errors.Join(errs...))
		}
	}

	// The validating policy (validating/plugin.go).
	vopts := plugincel.OptionalVariableDeclarations{HasParams: vp.Spec.ParamKind != nil, HasAuthorizer: true}
	msgOpts := vopts
	msgOpts.HasAuthorizer = false
	vc, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return nil, err
	}
	vc.CompileAndStoreVariables(variables(vp.Spec.Variables), vopts, environment.StoredExpressions)
	var checks, messages []plugincel.ExpressionAccessor
	for _, v := range vp.Spec.Validations {
		checks = append(checks, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		messages = append(messages, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
	}
	sp.validator = validating.NewValidator(
		vc.CompileCondition(checks, vopts, environment.StoredExpressions),
		matcherOf(vc, vp.Spec.MatchConditions, vopts, vp.Spec.FailurePolicy, vp.Name),
		vc.CompileCondition(nil, vopts, environment.StoredExpressions),
		vc.CompileCondition(messages, msgOpts, environment.StoredExpressions),
		vp.Spec.FailurePolicy, nil)
	return sp, nil
}

func variables(vs []admissionregistrationv1.Variable) []plugincel.NamedExpressionAccessor {
	out := make([]plugincel.NamedExpressionAccessor, len(vs))
	for i, v := range vs {
		out[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	return out
}

func matcherOf(c *plugincel.CompositedCompiler, conds []admissionregistrationv1.MatchCondition, opts plugincel.OptionalVariableDeclarations, fp *admissionregistrationv1.FailurePolicyType, name string) matchconditions.Matcher {
	if len(conds) == 0 {
		return nil
	}
	accessors := make([]plugincel.ExpressionAccessor, len(conds))
	for i := range conds {
		accessors[i] = (*matchconditions.MatchCondition)(&conds[i])
	}
	return matchconditions.NewMatcher(c.CompileCondition(accessors, opts, environment.StoredExpressions), fp, "policy", "validate", name)
}

// Result is what one Pod's creation gives under the policy.
type Result struct {
	Pod *corev1.Pod
	// Matched: the mutating policy's match conditions held.
	Matched bool
	// Warnings are the validating policy's messages (Warn, Audit).
	Warnings []string
	// MutationError is the error of a mutation the policy ignores.
	MutationError error
}

// DecodePod reads a Pod manifest (YAML or JSON) into the typed Pod the
// API server admits: empty lists and maps are dropped, quantities are
// canonical.
func DecodePod(manifest []byte) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := yaml.Unmarshal(manifest, pod); err != nil {
		return nil, err
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	return pod, nil
}

// Admit runs the mutating policy and then the validating policy on the
// creation of pod, as the admission chain runs them, with param as the
// mutating policy's parameter object.
func (sp *Policy) Admit(pod *corev1.Pod, param runtime.Object) (*Result, error) {
	userInfo := &user.DefaultInfo{Name: "kubernetes-admin", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	attributes := func(obj *corev1.Pod) *admission.VersionedAttributes {
		attr := admission.NewAttributesRecord(obj, nil, podGVK, obj.Namespace, obj.Name, podGVR, "", admission.Create, &metav1.CreateOptions{}, false, userInfo)
		return &admission.VersionedAttributes{Attributes: attr, VersionedKind: podGVK, VersionedObject: admission.NewLazyObject(obj)}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.Namespace}}
	out := &Result{Pod: pod, Matched: true}
	va := attributes(pod.DeepCopy())
	ctx := sp.compiler.CreateContext(context.Background())
	if sp.matcher != nil {
		m := sp.matcher.Match(ctx, va, param, nil)
		if m.Error != nil {
			return nil, fmt.Errorf("match conditions: %w", m.Error)
		}
		out.Matched = m.Matches
	}
	if out.Matched {
		for i, p := range sp.patchers {
			obj, err := p.Patch(ctx, patch.Request{
				MatchedResource: podGVR, VersionedAttributes: va, ObjectInterfaces: sp.interfaces,
				OptionalVariables: plugincel.OptionalVariableBindings{VersionedParams: param},
				Namespace:         ns,
			}, celconfig.RuntimeCELCostBudget)
			if err != nil && sp.ignores {
				out.MutationError = err
				break
			}
			if err != nil {
				return nil, fmt.Errorf("mutation %d: %w", i, err)
			}
			typed, err := toPod(obj)
			if err != nil {
				return nil, fmt.Errorf("mutation %d: %w", i, err)
			}
			va = attributes(typed)
		}
		out.Pod = va.VersionedObject.Object().(*corev1.Pod)
	}
	res := sp.validator.Validate(context.Background(), podGVR, attributes(out.Pod.DeepCopy()), nil, ns, celconfig.RuntimeCELCostBudget, nil)
	for _, d := range res.Decisions {
		switch d.Action {
		case validating.ActionDeny:
			out.Warnings = append(out.Warnings, d.Message)
		case validating.ActionAdmit:
		default:
			return nil, fmt.Errorf("validating policy: %s: %s", d.Action, d.Message)
		}
	}
	return out, nil
}

// toPod is the patcher's result as a typed Pod.
func toPod(obj runtime.Object) (*corev1.Pod, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return pod, nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{}
	return pod, runtime.DefaultUnstructuredConverter.FromUnstructured(u, pod)
}
