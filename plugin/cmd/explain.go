package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

const explainExample = `  # Why was this Pod (not) injected, and is its sidecar current?
  kubectl inject explain pod/web-7d4b9c-x2x9q -n shop

  # Would the Pods of this Deployment be injected at admission?
  kubectl inject explain deploy/web -n shop --profile logs

  # Offline, for a review in GitOps: what the policy would do in a namespace with these labels
  kubectl inject explain --local -f k8s/web.yaml --namespace-labels sidecar.kinject.dev/inject=enabled`

// ExplainOptions are the flags of kubectl inject explain.
type ExplainOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	Flags config.Flags
	// NamespaceLabels are the labels of the objects' namespace with
	// --local (the cluster's otherwise).
	NamespaceLabels map[string]string
	Name            string
}

// NewCmdExplain returns the explain subcommand.
func NewCmdExplain(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExplainOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: config.NewFlags(), Name: admission.DefaultName}
	c := &cobra.Command{
		Use:   "explain (TYPE/NAME... | -f FILE) [flags]",
		Short: "Say why the admission policy injects an object's Pods, or why not, and what would change it (read-only)",
		Long: `Explain, for a Pod or a workload's Pods, whether the admission policy injects
them and why: the deciding rule in words (the namespace is not enabled, a system
namespace, opted out by annotation, the host network, another mesh's proxy, a
conflict on a port or a container, a bad override value, a missing ConfigMap,
an outdated policy) and the command that changes it. For an existing Pod, also
whether its sidecar is current, as kubectl inject status says, and the command
that makes it so.

The policy is the one the cluster runs: the profile's installed policy
objects, as the API server stores them (else the ones kubectl inject policy
would compile from the template flags), run in-process with the API
server's own admission libraries on the Pod, with the namespace's labels
and the binding's selectors. With --local, nothing is read
from a cluster: the policy is compiled from the template flags, and
--namespace-labels gives the namespace's labels.

Exit code: 0 when every Pod is (or would be) injected and every existing
sidecar is current; 1 when any is not; 2 on an error.`,
		Example:       explainExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, args []string) error {
			o.Flags.Complete(c.Flags())
			if err := o.Validate(args); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			err := o.Run(c.Context(), args)
			var exit *ExitError
			if err != nil && !errors.As(err, &exit) {
				return &ExitError{Code: 2, Err: err}
			}
			return err
		},
	}
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	o.Flags.AddTemplateFlags(f)
	addStaticFlag(c, &o.Flags)
	f.StringSliceVarP(&o.Flags.Filenames, "filename", "f", nil, "Files holding the Pods or workloads to explain (- reads stdin)")
	f.BoolVar(&o.Flags.Local, "local", false, "Read nothing from a cluster: compile the policy from the template flags; --namespace-labels are the namespace's labels")
	f.StringToStringVar(&o.NamespaceLabels, "namespace-labels", nil, "With --local: the labels of the objects' namespace, KEY=VALUE,... (kubectl inject enable sets sidecar.kinject.dev/inject=enabled)")
	f.StringVarP(&o.Flags.Output, "output", "o", "", "json: the verdicts as a JSON document (default: text)")
	f.StringVar(&o.Name, "name", o.Name, "Base name of the policy objects (as kubectl inject policy --name)")
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("json"))
	return c
}

// Validate checks the flags and arguments.
func (o *ExplainOptions) Validate(args []string) error {
	var errs []error
	if o.Flags.Output != "" && o.Flags.Output != "json" {
		errs = append(errs, fmt.Errorf("--output must be json, not %q", o.Flags.Output))
	}
	switch {
	case len(args) == 0 && len(o.Flags.Filenames) == 0:
		errs = append(errs, errors.New("name what to explain: TYPE/NAME (pod/web-1, deploy/web) or -f FILE"))
	case len(args) > 0 && len(o.Flags.Filenames) > 0:
		errs = append(errs, errors.New("give TYPE/NAME or -f FILE, not both"))
	case o.Flags.Local && len(args) > 0:
		errs = append(errs, errors.New("--local reads no cluster: give the objects with -f FILE"))
	}
	if o.Flags.Local && o.Flags.TemplateConfigMap != "" {
		errs = append(errs, errors.New("--template-configmap needs a cluster; it cannot be used with --local"))
	}
	if len(o.NamespaceLabels) > 0 && !o.Flags.Local {
		errs = append(errs, errors.New("--namespace-labels needs --local (the cluster's namespaces have their own labels)"))
	}
	for _, a := range args {
		if _, _, ok := strings.Cut(a, "/"); !ok {
			errs = append(errs, fmt.Errorf("%q: want TYPE/NAME (pod/web-1, deploy/web)", a))
		}
	}
	errs = append(errs, o.Flags.ValidateTemplateFlags()...)
	return errors.Join(errs...)
}

// Verdict is what explain says of one object's Pods for one profile.
type Verdict struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace"`
	Profile   string `json:"profile,omitempty"`
	// Policy names the policy evaluated, and whether it is installed.
	Policy    string `json:"policy"`
	Installed bool   `json:"installed"`
	Template  string `json:"template"`
	// Injected: the policy adds the sidecar. Otherwise Reason is the
	// core's reason code (opted_out, conflict, ...) or one of the
	// binding's (namespace_not_enabled, system_namespace,
	// namespace_excluded, labels_not_selected, missing_reference).
	Injected bool        `json:"injected"`
	Reason   reason.Code `json:"reason,omitempty"`
	Message  string      `json:"message"`
	Hint     string      `json:"hint,omitempty"`
	// Notes are what else is worth knowing (an outdated policy, a
	// reference --local could not check).
	Notes []string `json:"notes,omitempty"`
	// Sidecar is, for an existing Pod, its sidecar's state as kubectl
	// inject status reports it, and Restart the command that makes it
	// current.
	Sidecar string `json:"sidecar,omitempty"`
	Restart string `json:"restart,omitempty"`
	// UpgradedInPlaceFrom is, for a Pod whose sidecar restart upgraded in
	// place, the template it was created with.
	UpgradedInPlaceFrom string `json:"upgradedInPlaceFrom,omitempty"`
}

// ok reports a verdict that needs nothing done.
func (v Verdict) ok() bool {
	return v.Injected && (v.Sidecar == "" || v.Sidecar == fleet.Current)
}

// explainTarget is one object and the Pod it makes.
type explainTarget struct {
	ref      string
	obj      *unstructured.Unstructured
	pod      *unstructured.Unstructured
	existing bool // obj is a Pod of the cluster
}

// Run explains every object named.
func (o *ExplainOptions) Run(ctx context.Context, args []string) error {
	var client dynamic.Interface
	namespace := "default"
	if o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		namespace = *o.ConfigFlags.Namespace // -n names the objects' namespace with --local too
	}
	if !o.Flags.Local {
		var err error
		if client, err = dynamicClient(o.ConfigFlags); err != nil {
			return err
		}
		if namespace, _, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return fmt.Errorf("read kubeconfig namespace: %w", err)
		}
	}
	targets, err := o.targets(ctx, client, namespace, args)
	if err != nil {
		return err
	}
	profiles, err := o.profiles(ctx, client)
	if err != nil {
		return err
	}
	var verdicts []Verdict
	for _, profile := range profiles {
		po := *o
		po.Flags.Profile = profile
		ev, err := po.evaluator(ctx, client)
		if err != nil {
			return err
		}
		for _, t := range targets {
			v, err := ev.explain(ctx, t)
			if err != nil {
				return fmt.Errorf("%s: %w", t.ref, err)
			}
			verdicts = append(verdicts, v)
		}
	}
	if err := o.print(verdicts); err != nil {
		return err
	}
	for _, v := range verdicts {
		if !v.ok() {
			return &ExitError{Code: 1, Silent: true, Err: errors.New("not every Pod is injected with a current sidecar")}
		}
	}
	return nil
}

// profiles are the profiles to explain: --profile's; without it, with a
// cluster, every profile whose policy kubectl-inject installed (the
// default profile when none is).
func (o *ExplainOptions) profiles(ctx context.Context, client dynamic.Interface) ([]string, error) {
	if o.Flags.ProfileGiven() || client == nil {
		return []string{o.Flags.Profile}, nil
	}
	list, err := listInstalledPolicies(ctx, client, o.Flags.StaticDir)
	if err != nil {
		return []string{o.Flags.Profile}, nil // the default's verdict says what it could not read
	}
	seen := map[string]bool{}
	for _, item := range list {
		if cfg, err := admission.InstalledConfig(item.GetName(), item.GetAnnotations()); err == nil && cfg != nil {
			seen[cfg.Settings.Profile] = true
		}
	}
	if len(seen) == 0 {
		return []string{""}, nil
	}
	out := slices.Sorted(maps.Keys(seen))
	return out, nil
}

func (o *ExplainOptions) print(verdicts []Verdict) error {
	if o.Flags.Output == "json" {
		return printJSON(o.Out, map[string]any{"apiVersion": "kinject.dev/v1alpha1", "kind": "InjectionExplanationList", "items": verdicts})
	}
	var b strings.Builder
	for i, v := range verdicts {
		if i > 0 {
			b.WriteString("\n")
		}
		state := "installed"
		switch {
		case o.Flags.Local:
			state = "compiled from the template flags"
		case !v.Installed:
			state = "not installed; as compiled from the template flags"
		}
		fmt.Fprintf(&b, "%s in namespace %s, %s:\n", v.Object, v.Namespace, naming.ProfileName(v.Profile))
		fmt.Fprintf(&b, "  policy:   %s (%s, template %s)\n", v.Policy, state, v.Template)
		if v.Injected {
			fmt.Fprintf(&b, "  verdict:  %s\n", v.Message)
		} else {
			fmt.Fprintf(&b, "  verdict:  not injected: %s\n", v.Message)
		}
		if v.Hint != "" {
			fmt.Fprintf(&b, "  to change: %s\n", v.Hint)
		}
		switch {
		case v.Sidecar != "" && v.UpgradedInPlaceFrom != "":
			fmt.Fprintf(&b, "  sidecar:  %s (upgraded in place)\n", v.Sidecar)
		case v.Sidecar != "":
			fmt.Fprintf(&b, "  sidecar:  %s\n", v.Sidecar)
		}
		if v.Restart != "" {
			fmt.Fprintf(&b, "  restart:  %s\n", v.Restart)
		}
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "  note:     %s\n", n)
		}
	}
	_, err := io.WriteString(o.Out, b.String())
	return err
}
