package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/config"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

const policyExample = `  # Print the policy for the embedded Envoy sidecar (no cluster needed)
  kubectl inject policy

  # Install it: every new Pod gets the sidecar from the API server itself
  kubectl inject policy --apply

  # What an upgrade would change in the installed policy (a dry run; exit 1 when it would)
  kubectl inject policy --apply --diff --image envoyproxy/envoy:v1.37.0

  # Only Pods that opt in, in two namespaces named here (labelled or not), as native sidecars
  kubectl inject policy --mode opt-in --namespaces shop,payments --native --apply

  # Every enabled namespace but one
  kubectl inject policy --exclude-namespaces legacy --apply

  # A second sidecar as its own profile (NAME.sidecar.kinject.dev/* annotations), beside the default one
  kubectl inject policy --profile logs --template log-agent.yaml --apply

  # As static admission manifests, which every API server loads from its disk at start (Kubernetes 1.37+)
  kubectl inject policy --static /etc/kubernetes/kinject
  kubectl inject policy --static /etc/kubernetes/kinject --check   # exit 1 with a diff when stale

  # The seed's ConfigMap as the template; remove the policy again
  kubectl inject policy --template-configmap mesh/envoy-initializer --apply
  kubectl inject policy --delete`

// PolicyOptions are the flags of kubectl inject policy.
type PolicyOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// Flags holds the template and policy flags, shared with injection.
	Flags          config.Flags
	Name           string
	Apply, Delete  bool
	ForceConflicts bool
	FieldManager   string
	// Check is --check (of the directory of --static, in Flags).
	Check bool
	// base, when set, stands in for the embedded default under the
	// template flags: check compiles an installed policy's configuration
	// again.
	base *inject.Config
}

// NewCmdPolicy returns the policy subcommand. configFlags are the parent
// command's kubeconfig flags.
func NewCmdPolicy(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PolicyOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: config.NewFlags(), Name: admission.DefaultName, FieldManager: DefaultFieldManager}
	c := &cobra.Command{
		Use:   "policy [flags]",
		Short: "Print, apply or delete the admission policy that injects new Pods (no webhook)",
		Long: `Compile the template and the selection into a MutatingAdmissionPolicy and its
binding (admissionregistration.k8s.io/v1, Kubernetes 1.36+), so that the API server
itself adds the sidecar to every new Pod, exactly as kubectl inject would, with
the same status record. Only Pods are injected, at CREATE: workloads' pod
templates stay as they are in git.

Admission is opt-in per namespace: the policy injects only Pods of namespaces
labelled sidecar.kinject.dev/inject=enabled (NAME.sidecar.kinject.dev/inject
with --profile NAME), which kubectl inject enable sets. --namespaces selects
namespaces by name instead. kube-system, kube-public and kube-node-lease are
never matched unless --namespaces names them. Inside a matched namespace, a
Pod annotated sidecar.kinject.dev/inject: "false" is left alone (opt-out mode)
and with --mode opt-in only Pods annotated "true" are injected; a Pod cannot
opt in from a namespace that is not matched.

When the sidecar needs an object of the Pod's namespace (the embedded
default: the ConfigMap envoy), the policy injects only where it exists (a
binding paramRef with parameterNotFoundAction: Allow): a Pod of a namespace
without it is left as created, and kinject-NAME-conflicts says so in a warning.

A Pod the template conflicts with (a container or volume of the same name that
differs, a port already used) is left as created, never half-injected; a
ValidatingAdmissionPolicy (kinject-NAME-conflicts) returns the reason to the
client as a warning and records it in the audit log.

Printing needs no cluster. --apply installs or updates the four objects with
server-side apply; --delete removes them.

--static DIR writes the same objects, named *.static.k8s.io, as files that
kube-apiserver (1.37+) loads from disk before it serves its first request,
and that no client can delete: DIR/mutating and DIR/validating, one object
per file, each written whole. It prints the AdmissionConfiguration to give
the API server (--admission-control-config-file). A template that needs an
object of the Pod's namespace has no static form (no paramRef there).`,
		Example:       policyExample,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Flags.Complete(c.Flags())
			err := o.Validate()
			if err == nil {
				err = o.Run(c.Context())
			}
			if o.Flags.Diff || o.Check {
				err = config.DiffExit(err)
			}
			return err
		},
	}
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	o.addCompileFlags(c)
	f.StringVarP(&o.Flags.Output, "output", "o", "", "yaml (default when printing) or json; with --apply, print what the server stored")
	f.BoolVar(&o.Apply, "apply", false, "Create or update the policy in the cluster (server-side apply)")
	f.BoolVar(&o.Delete, "delete", false, "Delete the policy from the cluster")
	f.BoolVar(&o.ForceConflicts, "force-conflicts", false, "With --apply: take over fields another manager owns")
	f.StringVar(&o.FieldManager, "field-manager", o.FieldManager, "Name of the field manager for --apply")
	f.BoolVar(&o.Flags.Diff, "diff", false, "With --apply or --delete: change nothing; show what would change in the cluster as a unified diff, as kubectl diff (exit 0: no change, 1: a change, 2: an error)")
	f.StringVar(&o.Flags.Color, "color", o.Flags.Color, `With --diff or --check: "auto" (colors on a terminal), "always" or "never"`)
	f.StringVar(&o.Flags.StaticDir, "static", "", "Write the policy as static admission manifests into this directory (mutating/ and validating/, one object per file, named *.static.k8s.io) and print the AdmissionConfiguration that loads them (Kubernetes 1.37+)")
	f.BoolVar(&o.Check, "check", false, "With --static: write nothing; compare the directory with what would be written, as a unified diff (exit 0: current, 1: stale, 2: an error)")
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("yaml", "json"))
	return c
}

// addCompileFlags registers the flags that say what the policy is compiled
// from (template, settings, names): policy and check take the same ones.
func (o *PolicyOptions) addCompileFlags(c *cobra.Command) {
	f := c.Flags()
	o.Flags.AddTemplateFlags(f)
	config.AddSettingFlag(f, "namespaces", "the policy injects their Pods, labelled or not (default: the namespaces kubectl inject enable labelled)")
	f.StringVarP(&o.Flags.Selector, "selector", "l", "", "Inject only Pods whose labels match this selector (=, !=, in, notin, KEY, !KEY)")
	f.StringVar(&o.Name, "name", o.Name, "Base name of the objects: kinject-NAME and kinject-NAME-conflicts (with --profile P: kinject-NAME-P and kinject-NAME-P-conflicts, beside the default profile's)")
	_ = c.RegisterFlagCompletionFunc("profile", completeProfiles(o.ConfigFlags))
	_ = c.RegisterFlagCompletionFunc("mode", fixedCompletion(string(inject.OptOut), string(inject.OptIn)))
}

// Validate checks the flags; it reports every problem at once.
func (o *PolicyOptions) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.Apply && o.Delete {
		add("--apply and --delete cannot be combined")
	}
	switch o.Flags.Output {
	case "", "yaml", "json":
	default:
		add("--output must be yaml or json, not %q", o.Flags.Output)
	}
	if o.Delete && o.Flags.Output != "" {
		add("--delete prints one line per object; it cannot be combined with --output")
	}
	if o.ForceConflicts && !o.Apply {
		add("--force-conflicts needs --apply")
	}
	if o.FieldManager == "" {
		add("--field-manager must not be empty")
	}
	if o.Flags.Diff && !o.Apply && !o.Delete {
		add("--diff shows what --apply or --delete would change in the cluster; give one of them (printing the policy changes nothing)")
	}
	if o.Flags.Diff && o.Flags.Output != "" {
		add("--diff prints the change; it cannot be combined with --output")
	}
	switch o.Flags.Color {
	case "auto", "always", "never":
	default:
		add("--color must be auto, always or never, not %q", o.Flags.Color)
	}
	if o.Check && o.Flags.StaticDir == "" {
		add("--check compares a directory of static manifests: give it with --static DIR")
	}
	if o.Flags.StaticDir != "" && (o.Apply || o.Delete || o.Flags.Diff || o.Flags.Output != "") {
		add("--static writes files for the API server to load; it cannot be combined with --apply, --delete, --diff or --output")
	}
	errs = append(errs, o.Flags.ValidateTemplateFlags()...)
	return errors.Join(errs...)
}

// Compile loads the template and settings from the flags and compiles them.
func (o *PolicyOptions) Compile() (*admission.Policy, error) {
	_, p, err := o.compile()
	return p, err
}

// compile is Compile that also returns the injector the policy was
// compiled from (check reads the template and status with it).
func (o *PolicyOptions) compile() (*inject.Injector, *admission.Policy, error) {
	return o.compileWith(admission.Compile)
}

// compileWith is compile with the compiler of one form of the policy
// (admission.Compile, admission.CompileStatic).
func (o *PolicyOptions) compileWith(compile func(*inject.Injector, string) (*admission.Policy, error)) (*inject.Injector, *admission.Policy, error) {
	tmpl, settings, err := o.Flags.LoadTemplateOver(o.base, clusterConfigMaps(o.ConfigFlags))
	if err != nil {
		return nil, nil, err
	}
	if o.Flags.Selector != "" {
		settings.Policy.Selector = o.Flags.Selector
	}
	in, err := config.NewInjector(tmpl, settings, o.ErrOut)
	if err != nil {
		return nil, nil, err
	}
	p, err := compile(in, o.Name)
	if err != nil {
		return nil, nil, err
	}
	for _, ns := range admission.NamedSystemNamespaces(settings.Policy) {
		fmt.Fprintf(o.ErrOut, "Warning: %s is a system namespace: the policy injects its Pods too, and a sidecar that cannot start there stops the cluster's own Pods\n", ns)
	}
	return in, p, nil
}

// Run prints, applies or deletes the policy.
func (o *PolicyOptions) Run(ctx context.Context) error {
	if o.Flags.StaticDir != "" {
		return o.runStatic()
	}
	p, err := o.Compile()
	if err != nil {
		return err
	}
	if !o.Apply && !o.Delete {
		return o.print(p)
	}
	client, err := dynamicClient(o.ConfigFlags)
	if err != nil {
		return err
	}
	objs, err := p.Objects()
	if err != nil {
		return err
	}
	if o.Flags.Diff {
		return o.diff(ctx, client, objs)
	}
	if o.Delete {
		return o.delete(ctx, client, objs)
	}
	return o.apply(ctx, client, objs)
}

// diff shows, per object, the change --apply or --delete would make, as
// kubectl diff does: the live object against a server-side dry run of the
// apply (or nothing, for a delete), without managedFields and
// resourceVersion. Nothing is stored.
func (o *PolicyOptions) diff(ctx context.Context, client dynamic.Interface, objs [][]byte) error {
	differ := 0
	for _, data := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return err
		}
		gvr := policyResource(u.GetKind())
		ref := fmt.Sprintf("%s.%s/%s", strings.ToLower(u.GetKind()), gvr.Group, u.GetName())
		before, after := "", ""
		current, err := client.Resource(gvr).Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading %s: %w", ref, err)
		default:
			if before, err = diffYAML(current); err != nil {
				return err
			}
		}
		to := "deleted/" + ref
		if o.Apply {
			to = "applied/" + ref
			got, err := client.Resource(gvr).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{
				FieldManager: o.FieldManager, Force: o.ForceConflicts, DryRun: []string{metav1.DryRunAll},
			})
			if err != nil {
				return fmt.Errorf("applying %s (dry run): %w", ref, err)
			}
			if after, err = diffYAML(got); err != nil {
				return err
			}
		}
		changed, err := textdiff.Write(o.Out, "live/"+ref, to, before, after, textdiff.Options{Color: o.Flags.ColorFor(o.Out)})
		if err != nil {
			return fmt.Errorf("write the diff: %w", err)
		}
		if changed {
			differ++
		}
	}
	if differ > 0 {
		return config.DiffChanged(differ, "objects")
	}
	return nil
}

func (o *PolicyOptions) print(p *admission.Policy) error {
	var (
		out []byte
		err error
	)
	if o.Flags.Output == "json" {
		out, err = p.JSON()
	} else {
		out, err = p.YAML()
	}
	if err != nil {
		return err
	}
	_, err = o.Out.Write(out)
	return err
}

// policyResource is the resource of an admissionregistration kind.
func policyResource(kind string) schema.GroupVersionResource {
	resources := map[string]string{
		admission.KindMutatingPolicy:          "mutatingadmissionpolicies",
		admission.KindMutatingPolicyBinding:   "mutatingadmissionpolicybindings",
		admission.KindValidatingPolicy:        "validatingadmissionpolicies",
		admission.KindValidatingPolicyBinding: "validatingadmissionpolicybindings",
	}
	return schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resources[kind]}
}

// apply server-side applies each object, policies before their bindings,
// and stops at the first failure so a binding never names a policy that
// could not be stored.
func (o *PolicyOptions) apply(ctx context.Context, client dynamic.Interface, objs [][]byte) error {
	var stored []map[string]any
	for _, data := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return err
		}
		gvr := policyResource(u.GetKind())
		got, err := client.Resource(gvr).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: o.FieldManager, Force: o.ForceConflicts})
		if err != nil {
			return fmt.Errorf("applying %s.%s/%s: %w", gvr.Resource, gvr.Group, u.GetName(), err)
		}
		fmt.Fprintf(o.ErrOut, "%s.%s/%s serverside-applied\n", strings.ToLower(u.GetKind()), gvr.Group, u.GetName())
		got.SetManagedFields(nil)
		stored = append(stored, got.Object)
	}
	return o.printStored(stored)
}

func (o *PolicyOptions) printStored(stored []map[string]any) error {
	if o.Flags.Output == "" {
		return nil
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": stored}
	u := &unstructured.Unstructured{Object: list}
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	if o.Flags.Output == "yaml" {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return err
		}
	}
	_, err = o.Out.Write(data)
	return err
}

// delete removes the bindings before the policies (the reverse of apply);
// objects already gone are reported, not failed.
func (o *PolicyOptions) delete(ctx context.Context, client dynamic.Interface, objs [][]byte) error {
	var errs []error
	for i := len(objs) - 1; i >= 0; i-- {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(objs[i], &meta); err != nil {
			return err
		}
		gvr := policyResource(meta.Kind)
		ref := fmt.Sprintf("%s.%s/%s", strings.ToLower(meta.Kind), gvr.Group, meta.Metadata.Name)
		err := client.Resource(gvr).Delete(ctx, meta.Metadata.Name, metav1.DeleteOptions{})
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(o.ErrOut, "%s not found\n", ref)
		case err != nil:
			errs = append(errs, fmt.Errorf("deleting %s: %w", ref, err))
		default:
			fmt.Fprintf(o.ErrOut, "%s deleted\n", ref)
		}
	}
	return errors.Join(errs...)
}

// validateNamespaceFlag checks every name a namespace flag gives.
func validateNamespaceFlag(flag string, names []string) []error {
	var errs []error
	for _, ns := range names {
		if err := inject.ValidateNamespace(ns); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	return errs
}
