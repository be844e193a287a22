// Command celcost prints the static cost estimate of every CEL expression of
// the admission policies on stdin (a multi-document YAML or JSON stream, as
// `kubectl inject policy` prints it), computed with the CEL environment
// kube-apiserver v1.37 builds for MutatingAdmissionPolicy and
// ValidatingAdmissionPolicy, beside the API server's limits.
//
// The API server does not estimate the cost of admission policy expressions
// when a policy is created: it compiles them with `object` of dynamic type
// and enforces the limits at run time, per call (PerCallLimit) and per
// evaluation (RuntimeCELCostBudget, and RuntimeCELCostBudgetMatchConditions
// for the match conditions). This program rebuilds the same environment
// (environment.MustBaseEnvSet at the server's default compatibility version,
// the variables of plugin/cel.createEnvForOpts, the composited "variables"
// of plugin/cel.NewCompositedCompiler, the JSONPatch types for mutations)
// and asks cel-go for the worst case with the API server's cost estimator
// (library.CostEstimator), twice:
//
//   - typed: `object` and `oldObject` typed from the OpenAPI schema of the
//     matched kind (k8s.io/kubernetes/pkg/generated/openapi, as the server's
//     type checker of ValidatingAdmissionPolicy resolves it), list and map
//     sizes bounded as the server bounds CRD validation rules: by what fits
//     in a request of the maximum size (3 MiB). resource.Quantity is typed
//     as a string, its OpenAPI v2 form (its v3 form has no type and would
//     drop every quantity field).
//   - dynamic: `object` of dynamic type, as the server compiles it; every
//     list of the object then has unknown size and any expression that
//     iterates over one is unbounded.
//
// A list held by a policy variable, and the result of string(), have unknown
// size to the estimator in both methods (cel-go does not carry sizes across
// variables or conversions), so an expression that iterates over or scans
// such a value is unbounded too; the output says so.
//
// With -pod FILE, every expression is also evaluated on that Pod (defaulted
// as the API server defaults a create request) by the API server's own
// compiler and evaluator (plugin/cel.NewCompositedCompiler, ForInput), and
// the cost it charges is reported: the runtime cost.
//
// Usage (from hack/apiserver, the module that builds kube-apiserver):
//
//	kubectl inject policy | go run ./celcost [-json] [-pod pod.yaml]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
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
	baseversion "k8s.io/component-base/version"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// Report is the output of -json.
type Report struct {
	// CompatibilityVersion is the CEL environment's version (the API
	// server's default: its binary's minor version minus one).
	CompatibilityVersion string `json:"compatibilityVersion"`
	PerCallLimit         int64  `json:"perCallLimit"`
	RuntimeBudget        int64  `json:"runtimeCELCostBudget"`
	MatchConditionBudget int64  `json:"runtimeCELCostBudgetMatchConditions"`
	// TypedMethod says how `object` was typed for the typed estimate.
	TypedMethod string       `json:"typedMethod"`
	Expressions []Expression `json:"expressions"`
	// Pod names the Pod of -pod, on which Runtime costs were measured.
	Pod string `json:"pod,omitempty"`
	// Totals are the runtime costs of one admission of the Pod, per
	// policy and budget.
	Totals []Total `json:"totals,omitempty"`
}

// Total is the runtime cost of a group of expressions that the API server
// charges to one budget when it admits the Pod.
type Total struct {
	Policy string `json:"policy"`
	What   string `json:"what"`
	Cost   int64  `json:"cost"`
	Budget int64  `json:"budget"`
}

// Expression is one CEL expression of a policy and its estimates.
type Expression struct {
	Policy string `json:"policy"`
	Kind   string `json:"kind"`
	// Field is where the expression is, e.g. spec.variables[2] (same_c0).
	Field  string `json:"field"`
	Length int    `json:"length"` // characters
	// Typed is the estimate with `object` typed from the OpenAPI schema.
	Typed Estimate `json:"typed"`
	// Dynamic is the estimate with `object` of dynamic type, as the API
	// server compiles it.
	Dynamic Estimate `json:"dynamic"`
	// Runtime is the cost the API server's own evaluator charges for the
	// expression on the Pod of -pod (absent without -pod).
	Runtime *Runtime `json:"runtime,omitempty"`
}

// Runtime is one evaluation by the API server's admission CEL evaluator.
type Runtime struct {
	// Cost is the budget the evaluation consumed: the expression's own
	// cost plus that of the variables it evaluates (lazily, once per
	// evaluation). For a variable, the cost of `variables.NAME` alone.
	Cost   int64  `json:"cost"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Estimate is a cel-go cost estimate (cost units).
type Estimate struct {
	Min       uint64 `json:"min"`
	Max       uint64 `json:"max"`
	Unbounded bool   `json:"unbounded,omitempty"` // Max >= unboundedFrom: some size is unknown
	Error     string `json:"error,omitempty"`
}

func main() {
	asJSON := flag.Bool("json", false, "print the report as JSON")
	podFile := flag.String("pod", "", "also evaluate every expression on this Pod (YAML or JSON; defaulted as the API server defaults it) with the API server's evaluator and report the runtime cost")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *asJSON, *podFile); err != nil {
		fmt.Fprintln(os.Stderr, "celcost:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, asJSON bool, podFile string) error {
	mutating, validating, err := readPolicies(in)
	if err != nil {
		return err
	}
	if len(mutating)+len(validating) == 0 {
		return errors.New("no MutatingAdmissionPolicy or ValidatingAdmissionPolicy on stdin")
	}
	compat := compatibilityVersion()
	base := environment.MustBaseEnvSet(compat)
	defs := resolver.NewDefinitionsSchemaResolver(openAPIDefinitions, scheme.Scheme)
	rep := &Report{
		CompatibilityVersion: compat.String(),
		PerCallLimit:         celconfig.PerCallLimit,
		RuntimeBudget:        celconfig.RuntimeCELCostBudget,
		MatchConditionBudget: celconfig.RuntimeCELCostBudgetMatchConditions,
	}
	var adm *admissionInput
	if podFile != "" {
		if adm, err = readPod(podFile); err != nil {
			return err
		}
		rep.Pod = adm.describe
	}
	var methods []string
	for _, p := range mutating {
		spec := p.Spec
		pol := policyExprs{name: p.Name, kind: "MutatingAdmissionPolicy", variables: spec.Variables, matchConditions: spec.MatchConditions, paramKind: spec.ParamKind != nil}
		for i, m := range spec.Mutations {
			switch {
			case m.JSONPatch != nil:
				pol.patches = append(pol.patches, field{fmt.Sprintf("spec.mutations[%d].jsonPatch.expression", i), m.JSONPatch.Expression, roleJSONPatch})
			case m.ApplyConfiguration != nil:
				pol.patches = append(pol.patches, field{fmt.Sprintf("spec.mutations[%d].applyConfiguration.expression", i), m.ApplyConfiguration.Expression, roleApplyConf})
			}
		}
		method, exprs, err := pol.estimate(base, defs, spec.MatchConstraints)
		if err != nil {
			return err
		}
		methods = append(methods, method)
		if adm != nil {
			totals, err := pol.evaluate(compat, adm, exprs)
			if err != nil {
				return err
			}
			rep.Totals = append(rep.Totals, totals...)
		}
		rep.Expressions = append(rep.Expressions, exprs...)
	}
	for _, p := range validating {
		spec := p.Spec
		pol := policyExprs{name: p.Name, kind: "ValidatingAdmissionPolicy", variables: spec.Variables, matchConditions: spec.MatchConditions, paramKind: spec.ParamKind != nil}
		for i, v := range spec.Validations {
			pol.conditions = append(pol.conditions, field{fmt.Sprintf("spec.validations[%d].expression", i), v.Expression, roleValidation})
			if v.MessageExpression != "" {
				pol.conditions = append(pol.conditions, field{fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression, roleMessage})
			}
		}
		for i, a := range spec.AuditAnnotations {
			pol.conditions = append(pol.conditions, field{fmt.Sprintf("spec.auditAnnotations[%d].valueExpression", i), a.ValueExpression, roleAudit})
		}
		method, exprs, err := pol.estimate(base, defs, spec.MatchConstraints)
		if err != nil {
			return err
		}
		methods = append(methods, method)
		if adm != nil {
			totals, err := pol.evaluate(compat, adm, exprs)
			if err != nil {
				return err
			}
			rep.Totals = append(rep.Totals, totals...)
		}
		rep.Expressions = append(rep.Expressions, exprs...)
	}
	rep.TypedMethod = strings.Join(dedupe(methods), "; ")
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printText(out, rep)
}

// openAPIDefinitions are kube-apiserver's OpenAPI definitions, with the
// schema of resource.Quantity taken from its OpenAPI v2 form (type string):
// its v3 form is a oneOf without a type, which common.SchemaDeclType drops,
// so that every field holding a quantity (resources.limits, ...) would be
// unknown to the typed environment. The API server serializes quantities
// as strings.
func openAPIDefinitions(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
	defs := generatedopenapi.GetOpenAPIDefinitions(ref)
	for name, d := range defs {
		if len(d.Schema.Type) > 0 || len(d.Schema.OneOf) == 0 || d.Schema.Format == "int-or-string" {
			continue
		}
		if v2, ok := d.Schema.Extensions[openapicommon.ExtensionV2Schema].(spec.Schema); ok && len(v2.Type) > 0 {
			d.Schema = v2
			defs[name] = d
		}
	}
	return defs
}

// compatibilityVersion is the CEL environment version kube-apiserver
// v1.37 uses by default: environment.DefaultCompatibilityVersion() reads
// the binary's version, which a program built without the release ldflags
// does not have, so it is derived from the same constant the server's
// binary version defaults to.
func compatibilityVersion() *utilversion.Version {
	return utilversion.MustParse(baseversion.DefaultKubeBinaryVersion).SubtractMinor(1)
}

func readPolicies(in io.Reader) ([]admissionv1.MutatingAdmissionPolicy, []admissionv1.ValidatingAdmissionPolicy, error) {
	var (
		mutating   []admissionv1.MutatingAdmissionPolicy
		validating []admissionv1.ValidatingAdmissionPolicy
	)
	dec := k8syaml.NewYAMLOrJSONDecoder(in, 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return mutating, validating, nil
			}
			return nil, nil, fmt.Errorf("reading the policy: %w", err)
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var tm struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, nil, fmt.Errorf("reading the policy: %w", err)
		}
		docs := []json.RawMessage{raw}
		if tm.Kind == "List" {
			docs = tm.Items
		}
		for _, d := range docs {
			if err := json.Unmarshal(d, &tm); err != nil {
				return nil, nil, err
			}
			switch tm.Kind {
			case "MutatingAdmissionPolicy":
				var p admissionv1.MutatingAdmissionPolicy
				if err := json.Unmarshal(d, &p); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", tm.Kind, err)
				}
				mutating = append(mutating, p)
			case "ValidatingAdmissionPolicy":
				var p admissionv1.ValidatingAdmissionPolicy
				if err := json.Unmarshal(d, &p); err != nil {
					return nil, nil, fmt.Errorf("%s: %w", tm.Kind, err)
				}
				validating = append(validating, p)
			}
		}
	}
}

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
	variables       []admissionv1.Variable
	matchConditions []admissionv1.MatchCondition
	patches         []field
	conditions      []field
}

func (p policyExprs) estimate(base *environment.EnvSet, defs *resolver.DefinitionsSchemaResolver, mc *admissionv1.MatchResources) (string, []Expression, error) {
	objType, method := objectDeclType(defs, mc)
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

var _ plugincel.Compiler = (*costCompiler)(nil)

type namedExpr struct{ name, expr string }

func (n *namedExpr) GetExpression() string    { return n.expr }
func (n *namedExpr) GetName() string          { return n.name }
func (n *namedExpr) ReturnTypes() []*cel.Type { return []*cel.Type{cel.AnyType} }

// sizeEstimator gives the maximum size of a list, map or string reached
// from a root variable by field selections, as the estimator of CRD
// validation rules does (apiextensions-apiserver schema/cel): the DeclType's
// MaxElements, which SchemaDeclType bounds by the request size.
type sizeEstimator struct {
	roots map[string]*apiservercel.DeclType
}

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

func (s *sizeEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}

func printText(out io.Writer, rep *Report) error {
	fmt.Fprintf(out, "CEL environment: kube-apiserver admission policies, compatibility version %s\n", rep.CompatibilityVersion)
	fmt.Fprintf(out, "typed estimate: %s\n", rep.TypedMethod)
	fmt.Fprintf(out, "dynamic estimate: object of dynamic type, as the API server compiles it at run time\n")
	fmt.Fprintf(out, "limits: PerCallLimit %d per expression; RuntimeCELCostBudget %d per policy evaluation; RuntimeCELCostBudgetMatchConditions %d for the match conditions\n\n",
		rep.PerCallLimit, rep.RuntimeBudget, rep.MatchConditionBudget)
	if rep.Pod != "" {
		fmt.Fprintf(out, "runtime: cost charged by the API server's evaluator on %s\n", rep.Pod)
	}
	fmt.Fprintf(out, "unbounded: the estimate depends on a size the estimator does not know (cel-go's 2^64-1, times a cost factor)\n\n")
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := "POLICY\tEXPRESSION\tCHARS\tTYPED MAX\t% OF PERCALLLIMIT\tDYNAMIC MAX"
	if rep.Pod != "" {
		head += "\tRUNTIME\tRESULT"
	}
	fmt.Fprintln(tw, head)
	for _, e := range rep.Expressions {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s", e.Policy, e.Field, e.Length, e.Typed.String(), e.Typed.Share(rep.PerCallLimit), e.Dynamic.String())
		if r := e.Runtime; r != nil {
			res := r.Result
			if r.Error != "" {
				res = "error: " + firstLine(r.Error)
			}
			fmt.Fprintf(tw, "\t%d\t%s", r.Cost, res)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Totals) > 0 {
		fmt.Fprintln(out)
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "POLICY\tONE ADMISSION OF THE POD\tRUNTIME COST\tBUDGET\t% OF BUDGET")
		for _, t := range rep.Totals {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4f%%\n", t.Policy, t.What, t.Cost, t.Budget, 100*float64(t.Cost)/float64(t.Budget))
		}
		return tw.Flush()
	}
	return nil
}

func (e Estimate) String() string {
	switch {
	case e.Error != "":
		return "error: " + firstLine(e.Error)
	case e.Unbounded:
		return "unbounded"
	}
	return fmt.Sprint(e.Max)
}

// Share is Max as a percentage of limit.
func (e Estimate) Share(limit int64) string {
	switch {
	case e.Error != "":
		return "-"
	case e.Unbounded:
		return "unbounded"
	}
	return fmt.Sprintf("%.4f%%", 100*float64(e.Max)/float64(limit))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func dedupe(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
