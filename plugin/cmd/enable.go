package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// NamespaceOptions are the flags of kubectl inject enable and disable.
type NamespaceOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Enable sets the label (enable) or removes it (disable).
	Enable       bool
	Profile      string
	DryRun       string
	Output       string
	FieldManager string
	namespaces   []string
}

// NewCmdEnable returns the enable subcommand; NewCmdDisable the disable one.
func NewCmdEnable(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdNamespaces(configFlags, streams, true)
}

// NewCmdDisable returns the disable subcommand.
func NewCmdDisable(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdNamespaces(configFlags, streams, false)
}

func newCmdNamespaces(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, enable bool) *cobra.Command {
	o := &NamespaceOptions{ConfigFlags: configFlags, IOStreams: streams, Enable: enable, DryRun: "none", FieldManager: DefaultFieldManager}
	verb, short, long, example := "enable", "Turn admission injection on for namespaces (label them)",
		`Label the namespaces sidecar.kinject.dev/inject=enabled (with --profile NAME:
NAME.sidecar.kinject.dev/inject=enabled), so that the admission policy
(kubectl inject policy --apply) injects the Pods created in them from now on.
Running Pods keep what they have until they are recreated (kubectl inject status
shows them). kube-system, kube-public and kube-node-lease are left out by the
policy whatever their labels, unless it is applied with --namespaces naming them.`,
		`  # Inject new Pods of two namespaces with the default sidecar
  kubectl inject enable shop payments

  # The same for a second sidecar's profile
  kubectl inject enable shop --profile logs

  # What would change, and the namespace as it would be stored
  kubectl inject enable shop --dry-run=server -o yaml`
	if !enable {
		verb, short, long, example = "disable", "Turn admission injection off for namespaces (remove the label)",
			`Remove the label that kubectl inject enable set, so the admission policy no
longer injects new Pods of these namespaces. Running Pods keep their sidecar
until they are recreated.`,
			`  # New Pods of shop stay as they are created
  kubectl inject disable shop`
	}
	c := &cobra.Command{
		Use:               verb + " NAMESPACE... [flags]",
		Short:             short,
		Long:              long,
		Example:           example,
		Args:              cobra.MinimumNArgs(1),
		SilenceUsage:      true,
		SilenceErrors:     true,
		ValidArgsFunction: o.completeNamespaces,
		RunE: func(c *cobra.Command, args []string) error {
			o.namespaces = args
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	f.StringVar(&o.Profile, "profile", "", config.ProfileUsage)
	f.StringVar(&o.DryRun, "dry-run", o.DryRun, `"none", "client" (print what would be sent) or "server" (the server checks it and stores nothing)`)
	f.Lookup("dry-run").NoOptDefVal = "client"
	f.StringVarP(&o.Output, "output", "o", "", "yaml, json or name: print the namespaces as stored (or as they would be)")
	f.StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the field manager for the change")
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("yaml", "json", "name"))
	_ = c.RegisterFlagCompletionFunc("dry-run", fixedCompletion("none", "client", "server"))
	_ = c.RegisterFlagCompletionFunc("profile", completeProfiles(o.ConfigFlags))
	return c
}

// Validate checks the flags and names; it reports every problem at once.
func (o *NamespaceOptions) Validate() error {
	var errs []error
	errs = append(errs, validateNamespaceFlag("namespace", o.namespaces)...)
	if err := naming.ValidateProfile(o.Profile); err != nil {
		errs = append(errs, fmt.Errorf("--%w", err))
	}
	switch o.DryRun {
	case "none", "client", "server":
	default:
		errs = append(errs, fmt.Errorf(`--dry-run must be "none", "client" or "server", not %q`, o.DryRun))
	}
	switch o.Output {
	case "", "yaml", "json", "name":
	default:
		errs = append(errs, fmt.Errorf("--output must be yaml, json or name, not %q", o.Output))
	}
	if o.FieldManager == "" {
		errs = append(errs, errors.New("--field-manager must not be empty"))
	}
	return errors.Join(errs...)
}

// Run labels (or unlabels) each namespace; one failing does not stop the
// others, and the exit code is 1 when any failed.
func (o *NamespaceOptions) Run(ctx context.Context) error {
	client, err := dynamicClient(o.ConfigFlags)
	if err != nil {
		return err
	}
	return o.run(ctx, client)
}

// run is Run on client.
func (o *NamespaceOptions) run(ctx context.Context, client dynamic.Interface) error {
	key := naming.NamespaceLabelFor(o.Profile)
	var objs []*unstructured.Unstructured
	failed := 0
	for _, ns := range o.namespaces {
		obj, line, err := o.label(ctx, client, ns, key)
		if err != nil {
			failed++
			fmt.Fprintf(o.ErrOut, "error: namespace %q: %v\n", ns, err)
			continue
		}
		fmt.Fprintln(o.ErrOut, line)
		obj.SetManagedFields(nil)
		objs = append(objs, obj)
	}
	if o.Output != "" {
		if err := printUnstructured(o.Out, o.Output, objs); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d namespaces failed", failed, len(o.namespaces))}
	}
	return nil
}

// label sets or removes key on namespace ns with a merge patch of that
// label only, and returns the namespace and its report line.
func (o *NamespaceOptions) label(ctx context.Context, client dynamic.Interface, ns, key string) (*unstructured.Unstructured, string, error) {
	ri := client.Resource(namespacesResource)
	obj, err := ri.Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", errors.New("not found (create it first: kubectl create namespace " + ns + ")")
	}
	if err != nil {
		return nil, "", err
	}
	if o.Enable && inject.IsSystemNamespace(ns) {
		fmt.Fprintf(o.ErrOut, "Warning: %s is a system namespace: the policy leaves it out whatever its labels; to inject there, apply the policy with --namespaces %s\n", ns, ns)
	}
	ref := "namespace/" + ns
	value, has := obj.GetLabels()[key]
	verb := "enabled"
	var patchValue any = naming.NamespaceEnabled
	if !o.Enable {
		verb, patchValue = "disabled", nil
	}
	if (o.Enable && value == naming.NamespaceEnabled) || (!o.Enable && !has) {
		return obj, ref + " unchanged", nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: patchValue}}})
	if err != nil {
		return nil, "", err
	}
	suffix := fmt.Sprintf(" (%s=%s)", key, naming.NamespaceEnabled)
	if !o.Enable {
		suffix = fmt.Sprintf(" (%s removed)", key)
	}
	switch o.DryRun {
	case "client":
		labels := obj.GetLabels()
		if o.Enable {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[key] = naming.NamespaceEnabled
		} else {
			delete(labels, key)
		}
		obj.SetLabels(labels)
		return obj, ref + " " + verb + suffix + " (dry run)", nil
	case "server":
		suffix += " (server dry run)"
	}
	opts := metav1.PatchOptions{FieldManager: o.FieldManager}
	if o.DryRun == "server" {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := ri.Patch(ctx, ns, types.MergePatchType, patch, opts)
	if err != nil {
		return nil, "", fmt.Errorf("patch: %w", err)
	}
	return out, ref + " " + verb + suffix, nil
}

// completeNamespaces completes enable's arguments with the namespaces not
// yet enabled for the profile, and disable's with those that are; names
// already given are left out. Any error yields no completions.
func (o *NamespaceOptions) completeNamespaces(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	client, err := dynamicClient(o.ConfigFlags)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := client.Resource(namespacesResource).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	given := map[string]bool{}
	for _, a := range args {
		given[a] = true
	}
	key := naming.NamespaceLabelFor(o.Profile)
	var names []string
	for _, item := range list.Items {
		enabled := item.GetLabels()[key] == naming.NamespaceEnabled
		if enabled != o.Enable && !given[item.GetName()] {
			names = append(names, item.GetName())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
