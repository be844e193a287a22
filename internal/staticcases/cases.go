// Package staticcases lists the hand edits that make a static policy
// unloadable, for the tests of pkg/admission/staticdir (the validation
// refuses each) and test/static (a real API server refuses each too).
package staticcases

import "strings"

// Case is one edit of one file of the default profile's static policy.
type Case struct {
	Name string
	// File is the index of the file edited, in StaticFiles' order: 0 the
	// mutating policy, 1 its binding, 2 the validating policy, 3 its
	// binding.
	File int
	Edit func(string) string
	// Wants are what the validation's error says (the file or object,
	// the field).
	Wants []string
}

// Cases are the edits.
var Cases = []Case{
	{"name without the suffix", 0, func(s string) string {
		return strings.Replace(s, "name: kinject-envoy.static.k8s.io", "name: kinject-envoy", 1)
	}, []string{"must have a name ending with", ".static.k8s.io"}},
	{"a parameter", 1, func(s string) string {
		return strings.Replace(s, "spec:\n", "spec:\n  paramRef:\n    name: envoy\n    parameterNotFoundAction: Allow\n", 1)
	}, []string{"spec.paramRef is not supported for static manifests"}},
	{"CEL that does not compile", 0, func(s string) string {
		return strings.Replace(s, "  variables:\n  - expression: ", "  variables:\n  - expression: 1 +* ", 1)
	}, []string{"mutatingadmissionpolicy/kinject-envoy.static.k8s.io", "spec.variables[0].expression", "compilation failed"}},
	{"an unsupported failure policy", 0, func(s string) string {
		return strings.Replace(s, "failurePolicy: Ignore", "failurePolicy: Sometimes", 1)
	}, []string{"spec.failurePolicy", "Unsupported value"}},
	{"a binding to no policy", 1, func(s string) string {
		return strings.Replace(s, "policyName: kinject-envoy.static.k8s.io", "policyName: other.static.k8s.io", 1)
	}, []string{"other.static.k8s.io"}},
	{"a validating policy among the mutating ones", 0, func(s string) string {
		return strings.Replace(s, "kind: MutatingAdmissionPolicy\n", "kind: ValidatingAdmissionPolicy\n", 1)
	}, []string{"unsupported resource type"}},
	{"a field no type declares", 0, func(s string) string {
		return strings.Replace(s, "spec:\n", "spec:\n  injectEverything: true\n", 1)
	}, []string{"mutating/kinject-envoy.policy.yaml", `unknown field "spec.injectEverything"`}},
}
