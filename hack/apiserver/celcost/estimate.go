package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
	"k8s.io/apiserver/pkg/cel/mutation"
	celopenapi "k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/kubernetes/scheme"
)

// field is one expression of a policy and its role there.
type field struct{ path, expr, role string }

// Roles of expressions other than variables and match conditions.
const (
	roleJSONPatch  = "jsonPatch"
	roleApplyConf  = "applyConfiguration"
	roleValidation = "validation"
	roleMessage    = "messageExpression"
	roleAudit      = "auditAnnotation"
)

// policyExprs is what one policy compiles: variables first (in order, each
// may use the ones before), then match conditions, then the mutations
// (JSONPatch types declared) or the validations.
type policyExprs struct {
	name, kind      string
	paramKind       bool
	match           *admissionv1.MatchResources // the policy's matchConstraints
	variables       []admissionv1.Variable
	matchConditions []admissionv1.MatchCondition
	patches         []field
	conditions      []field
}

// policies is the expressions of every policy, the mutating ones first.
func policies(mutating []admissionv1.MutatingAdmissionPolicy, validating []admissionv1.ValidatingAdmissionPolicy) []policyExprs {
	var out []policyExprs
	for _, p := range mutating {
		out = append(out, mutatingExprs(p))
	}
	for _, p := range validating {
		out = append(out, validatingExprs(p))
	}
	return out
}

// mutatingExprs is the expressions of a MutatingAdmissionPolicy: its
// variables, match conditions and mutations (JSON patches and apply
// configurations).
func mutatingExprs(p admissionv1.MutatingAdmissionPolicy) policyExprs {
	spec := p.Spec
	pol := policyExprs{name: p.Name, kind: "MutatingAdmissionPolicy", paramKind: spec.ParamKind != nil, match: spec.MatchConstraints, variables: spec.Variables, matchConditions: spec.MatchConditions}
	for i, m := range spec.Mutations {
		switch {
		case m.JSONPatch != nil:
			pol.patches = append(pol.patches, field{fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i), m.JSONPatch.Expression, roleJSONPatch})
		case m.ApplyConfiguration != nil:
			pol.patches = append(pol.patches, field{fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i), m.ApplyConfiguration.Expression, roleApplyConf})
		}
	}
	return pol
}

// validatingExprs is the expressions of a ValidatingAdmissionPolicy: its
// variables, match conditions, validations (with their message
// expressions) and audit annotations.
func validatingExprs(p admissionv1.ValidatingAdmissionPolicy) policyExprs {
	spec := p.Spec
	pol := policyExprs{name: p.Name, kind: "ValidatingAdmissionPolicy", paramKind: spec.ParamKind != nil, match: spec.MatchConstraints, variables: spec.Variables, matchConditions: spec.MatchConditions}
	for i, v := range spec.Validations {
		pol.conditions = append(pol.conditions, field{fmt.Sprintf("spec.validations[%d].expression", i), v.Expression, roleValidation})
		if v.MessageExpression != "" {
			pol.conditions = append(pol.conditions, field{fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression, roleMessage})
		}
	}
	for i, a := range spec.AuditAnnotations {
		pol.conditions = append(pol.conditions, field{fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression, roleAudit})
	}
	return pol
}

// estimate estimates every expression of the policy twice, with `object`
// typed from the schema of the kind it matches and of dynamic type, and
// returns how `object` was typed and the expressions in report order.
func (p policyExprs) estimate(base *environment.EnvSet, defs *resolver.DefinitionsSchemaResolver) (string, []Expression, error) {
	objType, method := objectDeclType(defs, p.match)
	typed, err := p.estimateWith(base, objType)
	if err != nil {
		return "", nil, err
	}
	dynamic, err := p.estimateWith(base, nil)
	if err != nil {
		return "", nil, err
	}
	out := make([]Expression, len(typed))
	for i := range typed {
		out[i] = Expression{Policy: p.name, Kind: p.kind, Field: typed[i].path, Length: len(typed[i].expr), Typed: typed[i].est, Dynamic: dynamic[i].est}
	}
	return method, out, nil
}

// estimated is an expression and its estimate in one environment.
type estimated struct {
	field
	est Estimate
}

// estimateWith compiles every expression of the policy with `object` of
// type objType (dynamic when nil) and estimates its cost.
func (p policyExprs) estimateWith(base *environment.EnvSet, objType *apiservercel.DeclType) ([]estimated, error) {
	envSet, sizes, err := buildEnvSet(base, objType, p.paramKind)
	if err != nil {
		return nil, err
	}
	composited, err := plugincel.NewCompositedCompilerForTypeChecking(envSet)
	if err != nil {
		return nil, err
	}
	cc := &costCompiler{composited: composited, estimator: &library.CostEstimator{SizeEstimator: sizes}}
	composited.Compiler = cc
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.paramKind, HasAuthorizer: true}
	var out []estimated
	// Variables are compiled and stored first, as the server does, so that
	// every expression sees their types; they are listed in policy order.
	var vars []estimated
	for i, v := range p.variables {
		cc.last = Estimate{}
		composited.CompileAndStoreVariable(&namedExpr{name: v.Name, expr: v.Expression}, opts, environment.StoredExpressions)
		vars = append(vars, estimated{field{fmt.Sprintf("spec.variables[%d] (%s)", i, v.Name), v.Expression, ""}, cc.last})
	}
	for i, m := range p.matchConditions {
		out = append(out, estimated{field{fmt.Sprintf("spec.matchConditions[%d] (%s)", i, m.Name), m.Expression, ""}, cc.estimate(m.Expression, false)})
	}
	out = append(out, vars...)
	for _, f := range p.patches {
		out = append(out, estimated{f, cc.estimate(f.expr, true)})
	}
	for _, f := range p.conditions {
		out = append(out, estimated{f, cc.estimate(f.expr, false)})
	}
	return out, nil
}

// buildEnvSet declares the variables of an admission policy expression as
// plugin/cel.createEnvForOpts does (object and oldObject of type objType
// instead of dyn when given), and returns a size estimator that knows the
// maximum sizes of their lists, maps and strings.
func buildEnvSet(base *environment.EnvSet, objType *apiservercel.DeclType, hasParams bool) (*environment.EnvSet, *sizeEstimator, error) {
	requestType := plugincel.BuildRequestType()
	namespaceType := plugincel.BuildNamespaceType()
	objCel := cel.DynType
	declTypes := []*apiservercel.DeclType{namespaceType, requestType}
	if objType != nil {
		objCel = objType.CelType()
		declTypes = append(declTypes, objType)
	}
	opts := []cel.EnvOption{
		cel.Variable(plugincel.ObjectVarName, objCel),
		cel.Variable(plugincel.OldObjectVarName, objCel),
		cel.Variable(plugincel.NamespaceVarName, namespaceType.CelType()),
		cel.Variable(plugincel.RequestVarName, requestType.CelType()),
		cel.Variable(plugincel.AuthorizerVarName, library.AuthorizerType),
		cel.Variable(plugincel.RequestResourceAuthorizerVarName, library.ResourceCheckType),
	}
	if hasParams {
		opts = append(opts, cel.Variable(plugincel.ParamsVarName, cel.DynType))
	}
	envSet, err := base.Extend(environment.VersionedOptions{
		IntroducedVersion: utilversion.MajorMinor(1, 0),
		EnvOptions:        opts,
		DeclTypes:         declTypes,
	}, environment.StrictCostOpt)
	if err != nil {
		return nil, nil, fmt.Errorf("CEL environment: %w", err)
	}
	roots := map[string]*apiservercel.DeclType{
		plugincel.NamespaceVarName: namespaceType,
		plugincel.RequestVarName:   requestType,
	}
	if objType != nil {
		roots[plugincel.ObjectVarName] = objType
		roots[plugincel.OldObjectVarName] = objType
	}
	return envSet, &sizeEstimator{roots: roots}, nil
}

// objectDeclType resolves the kind the policy matches (its only resource
// rule's group, version and resource) to the OpenAPI schema of that kind;
// nil (dynamic) when the policy matches no single kind.
func objectDeclType(defs *resolver.DefinitionsSchemaResolver, mc *admissionv1.MatchResources) (*apiservercel.DeclType, string) {
	var gvks []schema.GroupVersionKind
	if mc != nil {
		for _, r := range mc.ResourceRules {
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						if gvk, ok := kindFor(schema.GroupVersionResource{Group: g, Version: v, Resource: res}); ok {
							gvks = append(gvks, gvk)
						}
					}
				}
			}
		}
	}
	if len(gvks) != 1 {
		return nil, "object of dynamic type (the policy does not match exactly one built-in kind)"
	}
	s, err := defs.ResolveSchema(gvks[0])
	if err != nil {
		return nil, fmt.Sprintf("object of dynamic type (no schema for %s: %v)", gvks[0], err)
	}
	dt := common.SchemaDeclType(&celopenapi.Schema{Schema: s}, true)
	if dt == nil {
		return nil, fmt.Sprintf("object of dynamic type (schema of %s not convertible)", gvks[0])
	}
	dt = dt.MaybeAssignTypeName("kinject.celcost." + gvks[0].Kind)
	gv := gvks[0].Version
	if gvks[0].Group != "" {
		gv = gvks[0].Group + "/" + gv
	}
	return dt, fmt.Sprintf("object typed from the OpenAPI schema of %s %s (k8s.io/kubernetes/pkg/generated/openapi), list and string sizes bounded by the 3 MiB request size", gv, gvks[0].Kind)
}

// kindFor maps a resource of the client-go scheme to its kind.
func kindFor(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool) {
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Group != gvr.Group || gvk.Version != gvr.Version || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		if plural, _ := meta.UnsafeGuessKindToResource(gvk); plural.Resource == gvr.Resource {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// costCompiler compiles like plugin/cel.compiler.CompileCELExpression and
// also estimates the cost of the expression. It is installed as the
// Compiler of a CompositedCompiler (as the server's type checker does) so
// that the composited "variables" get the types of the stored variables.
type costCompiler struct {
	composited *plugincel.CompositedCompiler
	estimator  *library.CostEstimator
	last       Estimate // the estimate of the last CompileCELExpression
}

// CompileCELExpression compiles the expression in the composited
// environment of mode and keeps its estimate in c.last.
func (c *costCompiler) CompileCELExpression(accessor plugincel.ExpressionAccessor, _ plugincel.OptionalVariableDeclarations, mode environment.Type) plugincel.CompilationResult {
	env, err := c.composited.Env(mode)
	if err != nil {
		c.last = Estimate{Error: err.Error()}
		return plugincel.CompilationResult{Error: &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: err.Error()}}
	}
	ast, est := c.compile(env, accessor.GetExpression())
	c.last = est
	if ast == nil {
		return plugincel.CompilationResult{Error: &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: est.Error}}
	}
	return plugincel.CompilationResult{OutputType: ast.OutputType()}
}

// compile compiles expr in env, instantiates its program as the server does
// and estimates its cost; the AST is nil when it does not compile.
func (c *costCompiler) compile(env *cel.Env, expr string) (*cel.Ast, Estimate) {
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, Estimate{Error: "compilation failed: " + issues.String()}
	}
	if _, err := env.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency)); err != nil {
		return nil, Estimate{Error: "program instantiation failed: " + err.Error()}
	}
	ce, err := env.EstimateCost(ast, c.estimator)
	if err != nil {
		return ast, Estimate{Error: "cost estimation failed: " + err.Error()}
	}
	return ast, Estimate{Min: ce.Min, Max: ce.Max, Unbounded: ce.Max >= unboundedFrom}
}

// unboundedFrom: cel-go estimates a size it does not know as 2^64-1 and
// saturates products there; costs derived from it are that times a cost
// factor (0.1 for string operations, ...). No bounded size of an object of
// at most 3 MiB gets near it for the expressions of these policies.
const unboundedFrom = math.MaxUint64 / 100

// estimate compiles expr in the policy's environment (with the JSONPatch
// types of mutations when patch is set) and estimates its cost.
func (c *costCompiler) estimate(expr string, patch bool) Estimate {
	env, err := c.composited.Env(environment.StoredExpressions)
	if err != nil {
		return Estimate{Error: err.Error()}
	}
	if patch {
		// plugin/cel.hasPatchTypes
		if env, err = env.Extend(common.ResolverEnvOption(&mutation.DynamicTypeResolver{}), library.JSONPatch()); err != nil {
			return Estimate{Error: err.Error()}
		}
	}
	_, est := c.compile(env, expr)
	return est
}

// costCompiler is a plugin/cel Compiler.
var _ plugincel.Compiler = (*costCompiler)(nil)

// namedExpr is a policy variable for CompileAndStoreVariable.
type namedExpr struct{ name, expr string }

// GetExpression is the variable's expression.
func (n *namedExpr) GetExpression() string { return n.expr }

// GetName is the variable's name.
func (n *namedExpr) GetName() string { return n.name }

// ReturnTypes allows a variable of any type.
func (n *namedExpr) ReturnTypes() []*cel.Type { return []*cel.Type{cel.AnyType} }

// sizeEstimator gives the maximum size of a list, map or string reached
// from a root variable by field selections, as the estimator of CRD
// validation rules does (apiextensions-apiserver schema/cel): the DeclType's
// MaxElements, which SchemaDeclType bounds by the request size.
type sizeEstimator struct {
	roots map[string]*apiservercel.DeclType
}

// EstimateSize follows the node's path from its root variable through the
// DeclTypes; nil (unknown) where the path leaves them or has no bound.
func (s *sizeEstimator) EstimateSize(element checker.AstNode) *checker.SizeEstimate {
	path := element.Path()
	if len(path) == 0 {
		return nil
	}
	cur, ok := s.roots[path[0]]
	if !ok {
		return nil
	}
	for _, name := range path[1:] {
		switch name {
		case "@items", "@values":
			if cur.ElemType == nil {
				return nil
			}
			cur = cur.ElemType
		case "@keys":
			if cur.KeyType == nil {
				return nil
			}
			cur = cur.KeyType
		default:
			f, ok := cur.Fields[name]
			if !ok || f.Type == nil {
				return nil
			}
			cur = f.Type
		}
	}
	if cur.MaxElements <= 0 {
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(cur.MaxElements)}
}

// EstimateCallCost leaves every call to the default estimate.
func (s *sizeEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}
