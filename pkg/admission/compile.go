package admission

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
)

// DefaultName is the base name of the policy objects when none is given.
const DefaultName = "envoy"

// FieldManager is the field manager of server-side applied policy objects.
const FieldManager = "kubectl-inject"

// Policy is a compiled admission policy: the objects to install.
type Policy struct {
	// Name is the name of the mutating policy and its binding.
	Name string
	// ConflictName is the name of the validating policy and its binding
	// that warn about Pods left as created because of a conflict.
	ConflictName string
	// Requires is the object the mutating policy needs in the Pod's
	// namespace before it injects (nil when the template references none).
	Requires *template.Reference
	// TemplateHash is the hash of the template the policy injects, the
	// one its status records carry (TemplateHashAnnotation).
	TemplateHash string
	// Hash identifies the compiled objects, template and settings: it is
	// their PolicyHashAnnotation.
	Hash string
	// Static says the objects are named for static admission manifests
	// (StaticSuffix), which the API server loads from files.
	Static  bool
	objects []any
}

// compiler holds what one compilation needs.
type compiler struct {
	in      *inject.Injector
	profile string // the injector's profile, "" for the default
	items   []item // containers, then init containers, then volumes
	params  []param
	vars    []variable
	names   names
	// literals are the long literals the policy writes once
	// (bindRepeated).
	literals []namedLiteral
	// jsonEscapes is the variable of the JSON escapes, declared where a
	// string is first JSON-escaped (jsonEscaped).
	jsonEscapes expr.Expr
}

// variable is one of the policy's variables.
type variable struct {
	name    string
	comment string // what it holds, written above its expression
	value   expr.Expr
}

// Compile turns an injector (template and settings) into an admission
// policy that gives every new Pod what the core would give it. name is the
// base name of the objects (DefaultName when empty); they are called
// kinject-NAME and kinject-NAME-conflicts for the default profile, and
// kinject-NAME-PROFILE and kinject-NAME-PROFILE-conflicts for a named
// profile, so that every profile's policy can be installed beside the
// others under the same base name.
func Compile(in *inject.Injector, name string) (*Policy, error) {
	return compile(in, name, false)
}

// compile is Compile, or with static CompileStatic.
func compile(in *inject.Injector, name string, static bool) (*Policy, error) {
	objName := ObjectName(name, in.Profile())
	conflictName := objName + "-conflicts"
	if static {
		objName, conflictName = objName+StaticSuffix, conflictName+StaticSuffix
	}
	if !grammar.IsDNSSubdomain(conflictName) {
		return nil, fmt.Errorf("policy name %q: %s is not a valid object name (lower-case letters, digits, '-' and '.')", name, conflictName)
	}
	settings := in.Settings()
	if err := checkKinds(settings.Policy); err != nil {
		return nil, err
	}
	match, err := bindingMatch(settings.Policy, in.Profile())
	if err != nil {
		return nil, err
	}
	c := &compiler{in: in, profile: in.Profile(), names: names{}}
	if err := c.loadItems(in.Template()); err != nil {
		return nil, err
	}
	if err := c.loadParams(in.Template().Parameters); err != nil {
		return nil, err
	}
	c.addParamVariables()
	c.addOtherVariables()
	allContainers := c.addPodVariables()
	// The items as added come first: the conflict checks compare the
	// Pod's items with them.
	c.addItemVariables()
	refusedReason := c.addConflictVariable()
	c.addStatusVariables()
	conds := matchConditions(settings.Policy, c.profile, allContainers)
	c.addSkipVariable(conds[1:], refusedReason)
	patch := expr.Pretty(c.bindRepeated(c.patchExpression()))

	labels := map[string]string{"app.kubernetes.io/managed-by": FieldManager}
	annotations := map[string]string{TemplateHashAnnotation: in.TemplateHash()}
	rules := matchResources{ResourceRules: []resourceRule{{
		APIGroups: []string{""}, APIVersions: []string{"v1"}, Operations: []string{"CREATE"}, Resources: []string{"pods"},
	}}}
	meta := func(n string) objectMeta { return objectMeta{Name: n, Labels: labels, Annotations: annotations} }
	// The mutating policy also carries what it was compiled from, so that
	// status, restart and check read "current" from the cluster.
	config, err := in.Document()
	if err != nil {
		return nil, err
	}
	carried := map[string]string{TemplateHashAnnotation: in.TemplateHash(), ConfigAnnotation: string(config)}
	p := &Policy{Name: objName, ConflictName: conflictName, TemplateHash: in.TemplateHash(), Static: static}
	gate, gateKind := requiredObject(in.Template())
	if static && gate != nil {
		return nil, staticGateError(gate)
	}
	p.Requires = gate
	check, message, validatingVars := c.markCheck(conds, p.Name, gate)
	p.objects = []any{
		mutatingPolicy{
			typeMeta: typeMeta{APIVersion, KindMutatingPolicy},
			Metadata: objectMeta{Name: p.Name, Labels: labels, Annotations: carried},
			Spec: mutatingPolicySpec{
				ParamKind:        gateKind,
				MatchConstraints: rules,
				// The other conditions are the skip reasons, which the
				// mutation writes on the Pod it leaves alone.
				MatchConditions: policyConditions(conds[:1]),
				Variables:       c.policyVariables(c.vars),
				Mutations:       []mutation{{PatchType: "JSONPatch", JSONPatch: &expressed{Expression: patch}}},
				// An error of the policy (a template's expression that fails
				// on this Pod, a cost limit) leaves the Pod as created: the
				// injector is never the reason a Pod is refused. It also
				// leaves no mark, which the validating policy below turns
				// into a warning.
				FailurePolicy:      "Ignore",
				ReinvocationPolicy: "Never",
			},
		},
		binding{
			typeMeta: typeMeta{APIVersion, KindMutatingPolicyBinding},
			Metadata: meta(p.Name),
			Spec:     bindingSpec{PolicyName: p.Name, ParamRef: gateRef(gate), MatchResources: match},
		},
		validatingPolicy{
			typeMeta: typeMeta{APIVersion, KindValidatingPolicy},
			Metadata: meta(p.ConflictName),
			Spec: validatingPolicySpec{
				MatchConstraints: rules,
				// Only the first condition: it leaves out every Pod the
				// mutating policy injected. The validating policy sees the
				// Pod after every mutation, so it reads the mutating
				// policy's decision from the Pod (markCheck).
				MatchConditions: policyConditions(conds[:1]),
				Variables:       c.policyVariables(validatingVars),
				Validations:     []validation{{Expression: expr.Pretty(check), MessageExpression: expr.Pretty(message)}},
				// Fail, with a binding that only warns and audits: an error
				// of evaluation reaches the client as a warning naming the
				// expression, instead of passing unseen. It never denies.
				FailurePolicy: "Fail",
			},
		},
		binding{
			typeMeta: typeMeta{APIVersion, KindValidatingPolicyBinding},
			Metadata: meta(p.ConflictName),
			Spec:     bindingSpec{PolicyName: p.ConflictName, MatchResources: match, ValidationActions: []string{"Warn", "Audit"}},
		},
	}
	// The hash of everything compiled, stamped on every object after it is
	// computed (the objects share one annotations map): kubectl inject
	// check tells an installed policy compiled with other settings by it.
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	p.Hash = hashOf(bytes.Join(objs, []byte("\n")))
	annotations[PolicyHashAnnotation], carried[PolicyHashAnnotation] = p.Hash, p.Hash
	return p, nil
}

// requiredObject chooses the object of the Pod's namespace that the
// mutating policy needs before it injects (its parameter): the first, by
// kind and name, of the template's required references. CEL cannot read
// other objects, and a binding has one parameter: the others are checked
// by kubectl inject check and live injection, not at admission.
func requiredObject(t *template.Template) (*template.Reference, *paramKind) {
	refs := t.References()
	if len(refs) == 0 {
		return nil, nil
	}
	return &refs[0], &paramKind{APIVersion: "v1", Kind: refs[0].Kind}
}

func gateRef(gate *template.Reference) *paramRef {
	if gate == nil {
		return nil
	}
	return &paramRef{Name: gate.Name, ParameterNotFoundAction: "Allow"}
}

// ObjectName is the name of the mutating policy compiled with base name
// name (DefaultName when empty) for profile ("" for the default profile).
func ObjectName(name, profile string) string {
	if name == "" {
		name = DefaultName
	}
	if profile == "" {
		return "kinject-" + name
	}
	return "kinject-" + name + "-" + profile
}

// TemplateHashAnnotation on every policy object holds the hash of the
// template it injects, the hash its status records carry.
const TemplateHashAnnotation = "sidecar.kinject.dev/template"

// PolicyHashAnnotation on every policy object holds the hash of all the
// objects as compiled (without this annotation): a policy installed with
// other settings (namespaces, mode, a newer version's CEL) has another.
const PolicyHashAnnotation = "sidecar.kinject.dev/policy"

// ConfigAnnotation on the mutating policy holds the SidecarInjection it
// was compiled from (inject.Injector.Document): the template as injected
// and the settings. InstalledConfig reads it back.
const ConfigAnnotation = "sidecar.kinject.dev/config"

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:10])
}

func (c *compiler) loadItems(t *template.Template) error {
	if c.names == nil {
		c.names = names{}
	}
	for _, l := range []struct {
		list  string
		nodes []*yaml.Node
	}{
		{"containers", t.Containers},
		{"initContainers", t.InitContainers},
		{"volumes", t.Volumes},
	} {
		items, err := newItems(l.list, l.nodes)
		if err != nil {
			return fmt.Errorf("template: %w", err)
		}
		for i := range items {
			items[i].missing = expr.Var(c.names.unique(items[i].varName() + "Missing"))
			c.nameLongStrings(items[i])
		}
		c.items = append(c.items, items...)
	}
	return nil
}

// variable declares the variable v (expr.Var) holding value, with a
// comment that says what it holds, and returns v.
func (c *compiler) variable(v expr.Expr, comment string, value expr.Expr) expr.Expr {
	name := strings.TrimPrefix(expr.Text(v), "variables.")
	c.vars = append(c.vars, variable{name: name, comment: comment, value: value})
	return v
}

// policyVariables are vars as a policy's variables: each expression
// pretty-printed below a comment saying what it holds.
func (c *compiler) policyVariables(vars []variable) []namedCondition {
	out := make([]namedCondition, len(vars))
	for i, v := range vars {
		out[i] = namedCondition{Name: v.name, Expression: "// " + v.comment + "\n" + expr.Pretty(v.value)}
	}
	return out
}

// itemsOf returns the template's items of one list.
func (c *compiler) itemsOf(list string) []item {
	var out []item
	for _, it := range c.items {
		if it.list == list {
			out = append(out, it)
		}
	}
	return out
}

// declares reports whether the policy has a variable of that name: the
// steps that declare a variable several steps may need (portTaken,
// addOtherSidecars) declare it once.
func (c *compiler) declares(name string) bool {
	for _, v := range c.vars {
		if v.name == name {
			return true
		}
	}
	return false
}

// addPodVariables declares the Pod's containers (init containers
// included: they share one name space) and volumes, and for every
// template item whether the Pod lacks an item of that name (then it is
// added). It returns the variable of the Pod's containers: a template
// always adds a container or an init container (ParseTemplate refuses one
// without), and what reads the Pod's containers reads this variable.
func (c *compiler) addPodVariables() (allContainers expr.Expr) {
	allContainers = c.variable(expr.Var("allContainers"), "the Pod's containers and init containers",
		expr.Concat(expr.Field(spec, "containers"), expr.Cond(expr.Has(spec, "initContainers"), expr.Field(spec, "initContainers"), expr.List())))
	if len(c.itemsOf("volumes")) > 0 {
		c.variable(expr.Var("podVolumes"), "the Pod's volumes", expr.Cond(expr.Has(spec, "volumes"), expr.Field(spec, "volumes"), expr.List()))
	}
	x := expr.Ident("x")
	for _, it := range c.items {
		c.variable(it.missing, fmt.Sprintf("the Pod has no %s named %q: the template's is added", it.kind().Name, it.name),
			expr.Not(expr.Method(it.podItems(), "exists", x, expr.Eq(expr.Field(x, "name"), expr.Str(it.name)))))
	}
	return allContainers
}

// names hands out variable names, each once.
type names map[string]bool

// unique is name, or name with a number when it is taken.
func (n names) unique(name string) string {
	out := name
	for i := 2; n[out]; i++ {
		out = fmt.Sprintf("%s%d", name, i)
	}
	n[out] = true
	return out
}
