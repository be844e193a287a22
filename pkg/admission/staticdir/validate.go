package staticdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/manifest/loader"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
)

// Validate checks files as an API server checks its static manifests at
// start (an error there stops it): with k8s.io/apiserver's own manifest
// loader (documents, kinds per directory, the .static.k8s.io names, no
// paramKind or paramRef, bindings naming a policy of the set), the
// object rules of admissionregistration's validation that a compiled
// policy can break (required and supported values), fields that no
// Kubernetes type declares (the API server decodes strictly), and every
// CEL expression compiled as the API server compiles a new one. An error
// names the file, the object and the field. test/static puts each edit
// internal/staticcases lists into a real API server's directory: it
// refuses every one too.
func Validate(files []admission.StaticFile) error {
	tmp, err := os.MkdirTemp("", "kinject-static-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var errs []error
	for _, f := range files {
		if err := strictFields(f); err != nil {
			errs = append(errs, err)
		}
		target := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, f.Data, 0o644); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return ValidateDir(tmp)
}

// ValidateDir checks the static directory dir (its mutating/ and
// validating/ directories, those that exist) as Validate does.
func ValidateDir(dir string) error {
	var errs []error
	if d := filepath.Join(dir, admission.StaticMutatingDir); exists(d) {
		policies, bindings, _, err := loader.LoadPolicyManifests(d, decoder, typed[*admissionregistrationv1.MutatingAdmissionPolicy], typed[*admissionregistrationv1.MutatingAdmissionPolicyBinding],
			func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
		if err != nil {
			return err
		}
		for _, p := range policies {
			errs = append(errs, named("mutatingadmissionpolicy", p.Name, validateMutating(p))...)
		}
		for _, b := range bindings {
			errs = append(errs, named("mutatingadmissionpolicybinding", b.Name, validateBinding(b.Spec.PolicyName, nil))...)
		}
	}
	if d := filepath.Join(dir, admission.StaticValidatingDir); exists(d) {
		policies, bindings, _, err := loader.LoadPolicyManifests(d, decoder, typed[*admissionregistrationv1.ValidatingAdmissionPolicy], typed[*admissionregistrationv1.ValidatingAdmissionPolicyBinding],
			func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
		if err != nil {
			return err
		}
		for _, p := range policies {
			errs = append(errs, named("validatingadmissionpolicy", p.Name, validateValidating(p))...)
		}
		for _, b := range bindings {
			errs = append(errs, named("validatingadmissionpolicybinding", b.Name, validateBinding(b.Spec.PolicyName, b.Spec.ValidationActions))...)
		}
	}
	return errors.Join(errs...)
}

func exists(dir string) bool {
	info, err := os.Stat(dir)
	return err == nil && info.IsDir()
}

func named(kind, name string, list field.ErrorList) []error {
	out := make([]error, len(list))
	for i, e := range list {
		out[i] = fmt.Errorf("%s/%s: %s", kind, name, e.Error())
	}
	return out
}

// decoder decodes admissionregistration.k8s.io/v1 objects and v1 Lists,
// as the API server's loader does for these kinds.
var decoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	scheme.AddKnownTypes(schema.GroupVersion{Version: "v1"}, &metav1.List{})
	return serializer.NewCodecFactory(scheme).UniversalDeserializer()
}()

// typed accepts the objects of type T (one kind per directory: any other
// is the loader's "unsupported resource type").
func typed[T metav1.Object](obj runtime.Object) ([]T, error) {
	if t, ok := obj.(T); ok {
		return []T{t}, nil
	}
	return nil, loader.ErrUnrecognizedType
}

// strictFields decodes a file into its Kubernetes type, refusing fields
// the type does not declare.
func strictFields(f admission.StaticFile) error {
	var target any
	switch f.Kind {
	case admission.KindMutatingPolicy:
		target = &admissionregistrationv1.MutatingAdmissionPolicy{}
	case admission.KindMutatingPolicyBinding:
		target = &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	case admission.KindValidatingPolicy:
		target = &admissionregistrationv1.ValidatingAdmissionPolicy{}
	case admission.KindValidatingPolicyBinding:
		target = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	default:
		return fmt.Errorf("%s: kind %q is not an admission policy or binding", f.Path, f.Kind)
	}
	data, err := yaml.YAMLToJSON(f.Data)
	if err != nil {
		return fmt.Errorf("%s (%s/%s): %w", f.Path, f.Kind, f.Name, err)
	}
	// sigs.k8s.io/json, as the API server's strict decoding: the
	// errors name the field by its path.
	strict, err := sigsjson.UnmarshalStrict(data, target)
	if err != nil {
		return fmt.Errorf("%s (%s/%s): %w", f.Path, f.Kind, f.Name, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("%s (%s/%s): %w", f.Path, f.Kind, f.Name, errors.Join(strict...))
	}
	return nil
}

var spec = field.NewPath("spec")

func validateFailurePolicy(fp *admissionregistrationv1.FailurePolicyType) field.ErrorList {
	if fp == nil {
		return field.ErrorList{field.Required(spec.Child("failurePolicy"), "")}
	}
	if *fp != admissionregistrationv1.Fail && *fp != admissionregistrationv1.Ignore {
		return field.ErrorList{field.NotSupported(spec.Child("failurePolicy"), *fp, []string{"Fail", "Ignore"})}
	}
	return nil
}

func validateRules(m *admissionregistrationv1.MatchResources, mutating bool) field.ErrorList {
	path := spec.Child("matchConstraints")
	if m == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if len(m.ResourceRules) == 0 {
		return field.ErrorList{field.Required(path.Child("resourceRules"), "")}
	}
	var errs field.ErrorList
	for i, r := range m.ResourceRules {
		for _, op := range r.Operations {
			switch {
			case mutating && op != admissionregistrationv1.Create && op != admissionregistrationv1.Update:
				errs = append(errs, field.NotSupported(path.Child("resourceRules").Index(i).Child("operations"), op, []string{"CREATE", "UPDATE"}))
			case op != admissionregistrationv1.Create && op != admissionregistrationv1.Update && op != admissionregistrationv1.Delete &&
				op != admissionregistrationv1.Connect && op != admissionregistrationv1.OperationAll:
				errs = append(errs, field.NotSupported(path.Child("resourceRules").Index(i).Child("operations"), op, []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}))
			}
		}
	}
	return errs
}

// compiled adds an error for each CEL compilation error of r.
func compiled(errs field.ErrorList, r plugincel.CompilationResult, path *field.Path, expression string) field.ErrorList {
	if r.Error != nil {
		errs = append(errs, field.Invalid(path, expression, "compilation failed: "+r.Error.Detail))
	}
	return errs
}

func compilers() (*plugincel.CompositedCompiler, plugincel.Compiler) {
	envs := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	composited, err := plugincel.NewCompositedCompiler(envs)
	if err != nil {
		panic(err) // a fixed environment: it always builds
	}
	return composited, plugincel.NewCompiler(envs)
}

// Expressions compile in the environment of a new object
// (environment.NewExpressions), with variables composed in order, and
// match conditions without them, as admissionregistration's validation
// compiles them.
func compileCommon(vars []admissionregistrationv1.Variable, conds []admissionregistrationv1.MatchCondition, opts plugincel.OptionalVariableDeclarations) (*plugincel.CompositedCompiler, field.ErrorList) {
	composited, stateless := compilers()
	var errs field.ErrorList
	for i, v := range vars {
		r := composited.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, environment.NewExpressions)
		errs = compiled(errs, r, spec.Child("variables").Index(i).Child("expression"), v.Expression)
	}
	condOpts := plugincel.OptionalVariableDeclarations{HasParams: opts.HasParams, HasAuthorizer: true}
	for i, c := range conds {
		r := stateless.CompileCELExpression(&matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}, condOpts, environment.NewExpressions)
		errs = compiled(errs, r, spec.Child("matchConditions").Index(i).Child("expression"), c.Expression)
	}
	return composited, errs
}

func validateMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	errs := validateFailurePolicy(p.Spec.FailurePolicy)
	errs = append(errs, validateRules(p.Spec.MatchConstraints, true)...)
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	composited, cerrs := compileCommon(p.Spec.Variables, p.Spec.MatchConditions, opts)
	errs = append(errs, cerrs...)
	if len(p.Spec.Mutations) == 0 {
		errs = append(errs, field.Required(spec.Child("mutations"), "mutations must contain at least one item"))
	}
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	for i, m := range p.Spec.Mutations {
		path := spec.Child("mutations").Index(i)
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			r := composited.CompileCELExpression(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOpts, environment.NewExpressions)
			errs = compiled(errs, r, path.Child("jsonPatch", "expression"), m.JSONPatch.Expression)
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			r := composited.CompileCELExpression(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchOpts, environment.NewExpressions)
			errs = compiled(errs, r, path.Child("applyConfiguration", "expression"), m.ApplyConfiguration.Expression)
		default:
			errs = append(errs, field.Invalid(path.Child("patchType"), m.PatchType, "a JSONPatch with jsonPatch, or an ApplyConfiguration with applyConfiguration"))
		}
	}
	switch p.Spec.ReinvocationPolicy {
	case admissionregistrationv1.NeverReinvocationPolicy, admissionregistrationv1.IfNeededReinvocationPolicy:
	case "":
		errs = append(errs, field.Required(spec.Child("reinvocationPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(spec.Child("reinvocationPolicy"), p.Spec.ReinvocationPolicy, []string{"IfNeeded", "Never"}))
	}
	return errs
}

func validateValidating(p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	errs := validateFailurePolicy(p.Spec.FailurePolicy)
	errs = append(errs, validateRules(p.Spec.MatchConstraints, false)...)
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	composited, cerrs := compileCommon(p.Spec.Variables, p.Spec.MatchConditions, opts)
	errs = append(errs, cerrs...)
	if len(p.Spec.Validations) == 0 && len(p.Spec.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(spec.Child("validations"), "validations or auditAnnotations must contain at least one item"))
	}
	msgOpts := opts
	msgOpts.HasAuthorizer = false
	for i, v := range p.Spec.Validations {
		path := spec.Child("validations").Index(i)
		r := composited.CompileCELExpression(&validating.ValidationCondition{Expression: v.Expression}, opts, environment.NewExpressions)
		errs = compiled(errs, r, path.Child("expression"), v.Expression)
		if v.MessageExpression != "" {
			r := composited.CompileCELExpression(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, msgOpts, environment.NewExpressions)
			errs = compiled(errs, r, path.Child("messageExpression"), v.MessageExpression)
		}
	}
	return errs
}

func validateBinding(policyName string, actions []admissionregistrationv1.ValidationAction) field.ErrorList {
	var errs field.ErrorList
	if policyName == "" {
		errs = append(errs, field.Required(spec.Child("policyName"), ""))
	}
	for i, a := range actions {
		switch a {
		case admissionregistrationv1.Deny, admissionregistrationv1.Warn, admissionregistrationv1.Audit:
		default:
			errs = append(errs, field.NotSupported(spec.Child("validationActions").Index(i), a, []string{"Audit", "Deny", "Warn"}))
		}
	}
	return errs
}
