package admission

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
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
	objects      []any
}

// compiler holds what one compilation needs.
type compiler struct {
	in       *inject.Injector
	profile  string // the injector's profile, "" for the default
	items    []item // containers, then init containers, then volumes
	params   []param
	vars     []namedCondition
	patchers []string
}

// Compile turns an injector (template and settings) into an admission
// policy that gives every new Pod what the core would give it. name is the
// base name of the objects (DefaultName when empty); they are called
// kinject-NAME and kinject-NAME-conflicts for the default profile, and
// kinject-NAME-PROFILE and kinject-NAME-PROFILE-conflicts for a named
// profile, so that every profile's policy can be installed beside the
// others under the same base name.
func Compile(in *inject.Injector, name string) (*Policy, error) {
	objName := ObjectName(name, in.Profile())
	if !isDNSSubdomain(objName + "-conflicts") {
		return nil, fmt.Errorf("policy name %q: %s-conflicts is not a valid object name (lower-case letters, digits, '-' and '.')", name, objName)
	}
	settings := in.Settings()
	if err := checkKinds(settings.Policy); err != nil {
		return nil, err
	}
	match, err := bindingMatch(settings.Policy)
	if err != nil {
		return nil, err
	}
	c := &compiler{in: in, profile: in.Profile()}
	if err := c.loadItems(in.Template()); err != nil {
		return nil, err
	}
	if err := c.loadParams(in.Template().Parameters); err != nil {
		return nil, err
	}
	c.addParamVariables()
	c.addOtherVariables()
	c.addPresenceVariables()
	c.addConflictVariable()
	c.addStatusVariables()
	patch := c.patchExpression()

	conds := matchConditions(settings.Policy, c.profile)
	labels := map[string]string{"app.kubernetes.io/managed-by": FieldManager}
	annotations := map[string]string{TemplateHashAnnotation: in.TemplateHash()}
	rules := matchResources{ResourceRules: []resourceRule{{
		APIGroups: []string{""}, APIVersions: []string{"v1"}, Operations: []string{"CREATE"}, Resources: []string{"pods"},
	}}}
	meta := func(n string) objectMeta { return objectMeta{Name: n, Labels: labels, Annotations: annotations} }
	p := &Policy{Name: objName, ConflictName: objName + "-conflicts"}
	p.objects = []any{
		mutatingPolicy{
			typeMeta: typeMeta{APIVersion, KindMutatingPolicy},
			Metadata: meta(p.Name),
			Spec: mutatingPolicySpec{
				MatchConstraints:   rules,
				MatchConditions:    conds,
				Variables:          c.vars,
				Mutations:          []mutation{{PatchType: "JSONPatch", JSONPatch: &expressed{Expression: patch}}},
				FailurePolicy:      "Fail",
				ReinvocationPolicy: "Never",
			},
		},
		binding{
			typeMeta: typeMeta{APIVersion, KindMutatingPolicyBinding},
			Metadata: meta(p.Name),
			Spec:     bindingSpec{PolicyName: p.Name, MatchResources: match},
		},
		validatingPolicy{
			typeMeta: typeMeta{APIVersion, KindValidatingPolicy},
			Metadata: meta(p.ConflictName),
			Spec: validatingPolicySpec{
				MatchConstraints: rules,
				MatchConditions:  conds,
				Variables:        c.conflictVariables(),
				Validations: []validation{{
					Expression:        `variables.conflict == ""`,
					MessageExpression: celString("sidecar not injected by "+p.Name+": ") + ` + variables.conflict`,
				}},
				FailurePolicy: "Ignore",
			},
		},
		binding{
			typeMeta: typeMeta{APIVersion, KindValidatingPolicyBinding},
			Metadata: meta(p.ConflictName),
			Spec:     bindingSpec{PolicyName: p.ConflictName, MatchResources: match, ValidationActions: []string{"Warn", "Audit"}},
		},
	}
	return p, nil
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

func (c *compiler) loadItems(t *inject.Template) error {
	for _, l := range []struct {
		list, prefix string
		nodes        []*yaml.Node
	}{
		{"containers", "c", t.Containers},
		{"initContainers", "i", t.InitContainers},
		{"volumes", "v", t.Volumes},
	} {
		items, err := newItems(l.list, l.prefix, l.nodes)
		if err != nil {
			return fmt.Errorf("template: %w", err)
		}
		c.items = append(c.items, items...)
	}
	return nil
}

func (c *compiler) variable(name, expr string) {
	c.vars = append(c.vars, namedCondition{Name: name, Expression: expr})
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

// addPresenceVariables declares, for every template item, whether the Pod
// lacks an item of that name (then it is added).
func (c *compiler) addPresenceVariables() {
	for _, it := range c.items {
		c.variable(it.flag, "!("+it.presentExpr()+")")
	}
}

// addedList is a CEL list expression of f(item) for the items that are added.
func addedList(items []item, f func(item) string) string {
	if len(items) == 0 {
		return "[]"
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = fmt.Sprintf("(variables.%s ? [%s] : [])", it.flag, f(it))
	}
	return strings.Join(parts, " + ")
}

func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r == '-' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')) {
				return false
			}
		}
	}
	return true
}
