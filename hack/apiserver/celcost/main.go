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
	"os"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/kubernetes/scheme"
	baseversion "k8s.io/component-base/version"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// main parses the flags and runs; any error ends the program with status 1.
func main() {
	asJSON := flag.Bool("json", false, "print the report as JSON")
	podFile := flag.String("pod", "", "also evaluate every expression on this Pod (YAML or JSON; defaulted as the API server defaults it) with the API server's evaluator and report the runtime cost")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *asJSON, *podFile); err != nil {
		fmt.Fprintln(os.Stderr, "celcost:", err)
		os.Exit(1)
	}
}

// run reads the policies from in, estimates (and with podFile evaluates)
// every expression and writes the report to out.
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
	for _, pol := range policies(mutating, validating) {
		method, exprs, err := pol.estimate(base, defs)
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

// readPolicies reads the MutatingAdmissionPolicies and
// ValidatingAdmissionPolicies of a YAML or JSON stream (a List is read as
// its items); other kinds are passed over.
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

// dedupe is list without repeats, in the order of first appearance.
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
