package admission

// The admissionregistration.k8s.io/v1 objects the compiler writes, as small
// structs of their own so that inject-fn does not link k8s.io/api. Field
// names and JSON tags follow the Kubernetes API exactly.

// APIVersion is the group version of every object the compiler writes.
const APIVersion = "admissionregistration.k8s.io/v1"

// Object kinds.
const (
	KindMutatingPolicy          = "MutatingAdmissionPolicy"
	KindMutatingPolicyBinding   = "MutatingAdmissionPolicyBinding"
	KindValidatingPolicy        = "ValidatingAdmissionPolicy"
	KindValidatingPolicyBinding = "ValidatingAdmissionPolicyBinding"
)

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type objectMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type mutatingPolicy struct {
	typeMeta `json:",inline"`
	Metadata objectMeta         `json:"metadata"`
	Spec     mutatingPolicySpec `json:"spec"`
}

type mutatingPolicySpec struct {
	ParamKind          *paramKind       `json:"paramKind,omitempty"`
	MatchConstraints   matchResources   `json:"matchConstraints"`
	MatchConditions    []namedCondition `json:"matchConditions,omitempty"`
	Variables          []namedCondition `json:"variables,omitempty"`
	Mutations          []mutation       `json:"mutations"`
	FailurePolicy      string           `json:"failurePolicy"`
	ReinvocationPolicy string           `json:"reinvocationPolicy"`
}

type mutation struct {
	PatchType string     `json:"patchType"`
	JSONPatch *expressed `json:"jsonPatch,omitempty"`
}

type expressed struct {
	Expression string `json:"expression"`
}

type validatingPolicy struct {
	typeMeta `json:",inline"`
	Metadata objectMeta           `json:"metadata"`
	Spec     validatingPolicySpec `json:"spec"`
}

type validatingPolicySpec struct {
	MatchConstraints matchResources   `json:"matchConstraints"`
	MatchConditions  []namedCondition `json:"matchConditions,omitempty"`
	Variables        []namedCondition `json:"variables,omitempty"`
	Validations      []validation     `json:"validations"`
	FailurePolicy    string           `json:"failurePolicy"`
}

type validation struct {
	Expression        string `json:"expression"`
	MessageExpression string `json:"messageExpression,omitempty"`
	Reason            string `json:"reason,omitempty"`
}

// namedCondition is a match condition or a variable: both are a name and
// a CEL expression.
type namedCondition struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

type binding struct {
	typeMeta `json:",inline"`
	Metadata objectMeta  `json:"metadata"`
	Spec     bindingSpec `json:"spec"`
}

type bindingSpec struct {
	PolicyName        string          `json:"policyName"`
	ParamRef          *paramRef       `json:"paramRef,omitempty"`
	MatchResources    *matchResources `json:"matchResources,omitempty"`
	ValidationActions []string        `json:"validationActions,omitempty"`
}

// paramKind and paramRef make a policy run only where its parameter object
// exists: the binding looks it up by name in the Pod's namespace, and with
// parameterNotFoundAction Allow the policy is skipped when it is missing.
type paramKind struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type paramRef struct {
	Name                    string `json:"name"`
	ParameterNotFoundAction string `json:"parameterNotFoundAction"`
}

type matchResources struct {
	NamespaceSelector *labelSelector `json:"namespaceSelector,omitempty"`
	ObjectSelector    *labelSelector `json:"objectSelector,omitempty"`
	ResourceRules     []resourceRule `json:"resourceRules,omitempty"`
}

type resourceRule struct {
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Operations  []string `json:"operations"`
	Resources   []string `json:"resources"`
}

type labelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []selectorTerm    `json:"matchExpressions,omitempty"`
}

type selectorTerm struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}
