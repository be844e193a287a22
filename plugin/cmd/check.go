package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/config"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/admission"
)

const checkExample = `  # Before turning admission on, and after: is the cluster ready, is the policy current?
  kubectl inject check

  # The same for a profile and its template, as JSON
  kubectl inject check --profile logs --template log-agent.yaml -o json`

// Check outcomes.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// checkResult is one line of the checklist.
type checkResult struct {
	Category string `json:"category"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
}

// CheckOptions are the flags of kubectl inject check. The policy's compile
// flags say what "current" means, as for kubectl inject policy.
type CheckOptions struct {
	Policy PolicyOptions
	Output string

	results []checkResult
	// installed names the mutating policy whose configuration is current
	// ("" when the flags or the embedded default are).
	installed string
	// apiTemplate is the template hash of the profile's policy installed
	// through the API ("" when none is).
	apiTemplate string
}

// NewCmdCheck returns the check subcommand.
func NewCmdCheck(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CheckOptions{Policy: PolicyOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: config.NewFlags(), Name: admission.DefaultName}}
	c := &cobra.Command{
		Use:   "check [flags]",
		Short: "Pre-flight: is the cluster ready for the admission policy, and is what is installed current? (read-only)",
		Long: `Check, without changing anything, what turning admission injection on needs:
the API server's version and whether it serves MutatingAdmissionPolicy v1; what
the current user may do (policy --apply, enable, live injection, status); whether
the policy is installed and compiled from the current template and settings;
which namespaces are enabled, and what each lacks that the sidecar needs; and how
many workloads and Pods are behind.

Each check prints a line with its outcome ([ok], [warn] or [FAIL]) and, when it
is not ok, a hint saying what to run. The exit code is 1 when any check fails
(warnings do not fail it). "Current" is the configuration the installed policy
carries, compiled again by this version (a policy compiled by another version
is reported); without one, the embedded default. The template flags are those
of kubectl inject policy: --template or --template-configmap replace what the
policy carries, and the others (--image, --native, ...) apply over it.`,
		Example:       checkExample,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Policy.Flags.Complete(c.Flags())
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	configFlags.AddFlags(c.Flags())
	o.Policy.addCompileFlags(c)
	addStaticFlag(c, &o.Policy.Flags)
	c.Flags().StringVarP(&o.Output, "output", "o", "", "json: the checks as a JSON document (default: a checklist)")
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("json"))
	return c
}

// Validate checks the flags.
func (o *CheckOptions) Validate() error {
	var errs []error
	if o.Output != "" && o.Output != "json" {
		errs = append(errs, fmt.Errorf("--output must be json, not %q", o.Output))
	}
	errs = append(errs, o.Policy.Flags.ValidateTemplateFlags()...)
	return errors.Join(errs...)
}

func (o *CheckOptions) add(category, status, message, hint string) {
	o.results = append(o.results, checkResult{Category: category, Status: status, Message: message, Hint: hint})
}

// Run runs the checks in order; a cluster that cannot be reached ends
// them at the first.
func (o *CheckOptions) Run(ctx context.Context) error {
	if c := o.checkServer(ctx); c != nil {
		o.checkPermissions(ctx, c)
		o.checkPolicy(ctx, c)
	}
	if err := o.print(o.Policy.Out); err != nil {
		return err
	}
	return checkExit(o.results)
}

// checkExit is check's exit: 1 when any check failed (a warning alone
// passes).
func checkExit(results []checkResult) error {
	if failed := failedChecks(results); failed > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d checks failed", failed, len(results))}
	}
	return nil
}

// failedChecks counts the checks that failed.
func failedChecks(results []checkResult) int {
	failed := 0
	for _, r := range results {
		if r.Status == checkFail {
			failed++
		}
	}
	return failed
}

// checkClients are the clients of the checks after the first.
type checkClients struct {
	dynamic   dynamic.Interface
	metrics   metricsReader
	namespace string
	mapServed bool
}

// checkServer reads the server's version and whether it serves
// MutatingAdmissionPolicy v1. It returns nil when the server cannot be
// used at all (the reason is the one line of the cluster check).
func (o *CheckOptions) checkServer(ctx context.Context) *checkClients {
	const category = "cluster"
	live := &Options{ConfigFlags: o.Policy.ConfigFlags}
	if err := live.checkCluster(ctx); err != nil {
		o.add(category, checkFail, err.Error(), "")
		return nil
	}
	cfg, err := o.Policy.ConfigFlags.ToRESTConfig()
	if err != nil {
		o.add(category, checkFail, "kubeconfig: "+err.Error(), "")
		return nil
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		o.add(category, checkFail, err.Error(), "")
		return nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		o.add(category, checkFail, err.Error(), "")
		return nil
	}
	c := &checkClients{dynamic: dyn, metrics: serverMetrics(o.Policy.ConfigFlags)}
	if c.namespace, _, err = o.Policy.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
		o.add(category, checkFail, "read kubeconfig namespace: "+err.Error(), "")
		return nil
	}
	version := "unknown"
	if v, err := disc.ServerVersion(); err == nil {
		version = v.GitVersion
	}
	o.add(category, checkOK, fmt.Sprintf("the API server at %s answers: Kubernetes %s", cfg.Host, version), "")
	served := map[string]bool{}
	if list, err := disc.ServerResourcesForGroupVersion(admission.APIVersion); err == nil {
		for _, r := range list.APIResources {
			served[r.Name] = true
		}
	}
	c.mapServed = served["mutatingadmissionpolicies"] && served["mutatingadmissionpolicybindings"]
	if c.mapServed {
		o.add(category, checkOK, "MutatingAdmissionPolicy "+admission.APIVersion+" is served", "")
	} else {
		o.add(category, checkFail, fmt.Sprintf("MutatingAdmissionPolicy %s is not served (Kubernetes %s): the admission policy cannot be installed", admission.APIVersion, version),
			"it is served from Kubernetes 1.36 on, unless --runtime-config turns it off; until then, inject workloads (kubectl inject deploy --all) or manifests (--local, inject-fn)")
	}
	return c
}

// permission is what one command needs: verbs on resources.
type permission struct {
	command   string
	verbs     []string
	group     string
	resources []string
	// namespaced checks in the kubeconfig's namespace, else cluster-wide.
	namespaced bool
}

var selfSubjectAccessReviews = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}

var permissions = []permission{
	{"policy --apply", []string{"get", "patch"}, "admissionregistration.k8s.io",
		[]string{"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "validatingadmissionpolicies", "validatingadmissionpolicybindings"}, false},
	{"enable / disable", []string{"get", "patch"}, "", []string{"namespaces"}, false},
	{"live injection", []string{"get", "list", "patch"}, "apps", []string{"deployments", "statefulsets", "daemonsets"}, true},
	{"live injection", []string{"get"}, "", []string{"configmaps"}, true},
}

func init() {
	// status lists every listed kind: one row per API group, in the
	// table's order.
	var groups []string
	byGroup := map[string][]string{}
	for _, k := range statusResources {
		if byGroup[k.gvr.Group] == nil {
			groups = append(groups, k.gvr.Group)
		}
		byGroup[k.gvr.Group] = append(byGroup[k.gvr.Group], k.gvr.Resource)
	}
	for _, g := range groups {
		permissions = append(permissions, permission{"status", []string{"list"}, g, byGroup[g], true})
	}
}

// checkPermissions asks the API server (SelfSubjectAccessReview) whether
// the current user may do what each command needs.
func (o *CheckOptions) checkPermissions(ctx context.Context, c *checkClients) {
	const category = "permissions"
	denied := map[string][]string{}
	var order []string
	for _, p := range permissions {
		ns := ""
		if p.namespaced {
			ns = c.namespace
		}
		if _, seen := denied[p.command]; !seen {
			order = append(order, p.command)
			denied[p.command] = nil
		}
		// Resources denied the same verbs are named together.
		byVerbs := map[string][]string{}
		var verbOrder []string
		for _, res := range p.resources {
			var verbs []string
			for _, verb := range p.verbs {
				ok, err := canI(ctx, c.dynamic, verb, p.group, res, ns)
				if err != nil {
					o.add(category, checkFail, "cannot ask the API server what this user may do: "+oneLine(err.Error()), "")
					return
				}
				if !ok {
					verbs = append(verbs, verb)
				}
			}
			if len(verbs) == 0 {
				continue
			}
			key := strings.Join(verbs, ", ")
			if byVerbs[key] == nil {
				verbOrder = append(verbOrder, key)
			}
			byVerbs[key] = append(byVerbs[key], res)
		}
		for _, verbs := range verbOrder {
			denied[p.command] = append(denied[p.command], verbs+" "+strings.Join(byVerbs[verbs], ", ")+groupScope(p.group, ns))
		}
	}
	for _, cmd := range order {
		if d := denied[cmd]; len(d) > 0 {
			o.add(category, checkFail, fmt.Sprintf("%s: this user may not %s", cmd, strings.Join(d, "; ")),
				"ask the cluster's administrator for these rights (kubectl auth can-i --list shows what this user may do)")
		} else {
			o.add(category, checkOK, cmd+": allowed", "")
		}
	}
}

// groupScope says where resources are: "(apps, in shop)".
func groupScope(group, ns string) string {
	var parts []string
	if group != "" {
		parts = append(parts, group)
	}
	if ns != "" {
		parts = append(parts, "in "+ns)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// readError words an error reading an object for a check line: a 403 is
// said in two words (the permissions check says which rights are missing).
func readError(err error) string {
	if apierrors.IsForbidden(err) {
		return "403 Forbidden"
	}
	return oneLine(err.Error())
}

// canI asks the API server whether the current user may do verb on the
// resource (in namespace ns, or cluster-wide when it is "").
func canI(ctx context.Context, client dynamic.Interface, verb, group, resource, ns string) (bool, error) {
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{"verb": verb, "group": group, "resource": resource, "namespace": ns}},
	}}
	out, err := client.Resource(selfSubjectAccessReviews).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
	return allowed, nil
}

// print writes the checklist (or JSON) to w.
func (o *CheckOptions) print(w io.Writer) error {
	if o.Output == "json" {
		data, err := json.MarshalIndent(map[string]any{"checks": o.results, "failed": failedChecks(o.results)}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	}
	marks := map[string]string{checkOK: "[ok]  ", checkWarn: "[warn]", checkFail: "[FAIL]"}
	category := ""
	for _, r := range o.results {
		if r.Category != category {
			category = r.Category
			fmt.Fprintln(w, category)
		}
		fmt.Fprintf(w, "  %s %s\n", marks[r.Status], r.Message)
		if r.Hint != "" {
			fmt.Fprintf(w, "         hint: %s\n", r.Hint)
		}
	}
	return nil
}
