package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/config"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/fleet"
)

const statusExample = `  # Every workload and Pod of the namespace: outdated first
  kubectl inject status

  # All namespaces; exit 1 when anything runs an old template or is in error (CI, after an upgrade)
  kubectl inject status -A --check

  # Some workloads, with hashes and the restart command
  kubectl inject status deploy/web sts -l tier=front -o wide

  # What "current" means: another template
  kubectl inject status -A --template sidecar.yaml -o json

  # Another profile's sidecar (records under logs.sidecar.kinject.dev/status), with the override values recorded
  kubectl inject status --profile logs --template log-agent.yaml -o wide`

// StatusOptions are the flags of kubectl inject status.
type StatusOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams
	Flags         config.Flags
	AllNamespaces bool
	Check         bool
	// PageSize is the limit of each list call.
	PageSize int64

	current currentLine // set by Run
	// skipped lists the Pods the admission policy left alone, by reason
	// (their skip annotation); set by Run.
	skipped map[string][]string
}

// warn prints a warning line to stderr.
func (o *StatusOptions) warn(s string) { fmt.Fprintln(o.ErrOut, "Warning: "+s) }

// NewCmdStatus returns the status subcommand.
func NewCmdStatus(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &StatusOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: config.NewFlags(), PageSize: 500}
	c := &cobra.Command{
		Use:   "status [TYPE[/NAME]...] [flags]",
		Short: "Show which workloads and Pods run the current sidecar, an older one, or none",
		Long: `Show, for workloads and their Pods, the injection state: current (the current
template, with the override values the object's annotations ask for now),
outdated (another template, or override annotations changed since), not-injected
(injection would add the sidecar), or skipped:<reason> and error:<reason> with the
reasons of every other report. Per workload: the sidecar images, the template
hashes recorded and current, the recorded override values (-o wide), and how many
of its Pods run an older record than its template (they need a restart; the
command that does it is shown). A terminating Pod (being deleted) is counted
neither current nor behind, whatever it runs: a TERMINATING column counts
them when there are any. Pods without a controller and Pods injected at
admission are listed by themselves; the latter also count for their owner (a
ReplicaSet, or the Deployment above it). Outdated rows first. --profile NAME
reports that profile's sidecar (records under NAME.sidecar.kinject.dev/status).

--check exits 1 when any row is outdated, has Pods behind its template, or is
error:<reason> (a conflict, an invalid object), and 0 otherwise. Bare Pods
and Jobs that run an older sidecar are listed but not counted: kubectl
inject restart leaves them as they are (a bare Pod cannot gain containers,
a Job's Pods finish on their own). Terminating Pods are not counted either:
they are going.

Read-only: it needs get and list on the kinds it shows, and reads them with
list calls in pages of --chunk-size. "Current" is what the cluster runs: the
template and settings of the profile's installed admission policy (kubectl
inject policy --apply), else the embedded default; --template or
--template-configmap says otherwise, and the other template flags (--image,
--native, ...) apply over either, as they do for inject and policy.`,
		Example:       statusExample,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(c *cobra.Command, args []string) error {
			o.Flags.Complete(c.Flags())
			if err := o.Validate(args); err != nil {
				return err
			}
			return o.Run(c.Context(), args)
		},
	}
	f := c.Flags()
	o.ConfigFlags.AddFlags(f)
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List in all namespaces")
	f.StringVarP(&o.Flags.Selector, "selector", "l", "", "Only objects whose labels match this selector")
	f.StringVarP(&o.Flags.Output, "output", "o", "", "wide, json or yaml (default: a table)")
	f.BoolVar(&o.Check, "check", false, "Exit 1 when any row is outdated, has Pods behind its template, or is error:<reason> (a conflict, an invalid object); terminating Pods are not counted")
	f.Int64Var(&o.PageSize, "chunk-size", o.PageSize, "Objects per list call (as kubectl's --chunk-size)")
	o.Flags.AddTemplateFlags(f)
	addStaticFlag(c, &o.Flags)
	_ = c.RegisterFlagCompletionFunc("profile", completeProfiles(o.ConfigFlags))
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("wide", "json", "yaml"))
	return c
}

// Validate checks the flags and arguments; it reports every problem.
func (o *StatusOptions) Validate(args []string) error {
	var errs []error
	switch o.Flags.Output {
	case "", "wide", "json", "yaml":
	default:
		errs = append(errs, fmt.Errorf("--output must be wide, json or yaml, not %q", o.Flags.Output))
	}
	if o.PageSize < 1 {
		errs = append(errs, fmt.Errorf("--chunk-size must be at least 1"))
	}
	if _, err := parseStatusArgs(args); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.Flags.ValidateTemplateFlags()...)
	return errors.Join(errs...)
}

// statusFilter is what the arguments select: kinds, and names per kind.
type statusFilter map[string]map[string]bool // resource -> names (empty: all)

func parseStatusArgs(args []string) (statusFilter, error) {
	if len(args) == 0 {
		return nil, nil
	}
	filter := statusFilter{}
	for _, arg := range args {
		for _, part := range strings.Split(arg, ",") {
			typ, name, _ := strings.Cut(part, "/")
			res := listedResourceOf(typ)
			if res == "" {
				return nil, fmt.Errorf("%q is not a kind kubectl inject status shows (%s)", typ, strings.Join(resourceNames(statusResources), ", "))
			}
			if filter[res] == nil {
				filter[res] = map[string]bool{}
			}
			if name != "" {
				filter[res][name] = true
			}
		}
	}
	return filter, nil
}

// Run lists, classifies and prints.
func (o *StatusOptions) Run(ctx context.Context, args []string) error {
	filter, _ := parseStatusArgs(args)
	// -l selects the rows shown, as kubectl get -l does; it is not the
	// template's label selection (that would report every other object
	// as skipped).
	shown, err := labels.Parse(o.Flags.Selector)
	if err != nil {
		return fmt.Errorf("--selector %q: %w", o.Flags.Selector, err)
	}
	namespace := ""
	if !o.AllNamespaces {
		if namespace, _, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return fmt.Errorf("read kubeconfig namespace: %w", err)
		}
	}
	client, err := dynamicClient(o.ConfigFlags)
	if err != nil {
		return err
	}
	cur, err := readCurrent(ctx, &o.Flags, client, serverMetrics(o.ConfigFlags), clusterConfigMaps(o.ConfigFlags), "", false, false, o.warn)
	if err != nil {
		return err
	}
	in, err := config.NewInjector(cur.Template, cur.Settings, io.Discard)
	if err != nil {
		return err
	}
	o.current = currentOf(in, cur)
	var objs []*unstructured.Unstructured
	var forbidden []error
	for _, r := range statusResources {
		if filter != nil && filter[r.gvr.Resource] == nil && !neededFor(r.gvr.Resource, filter) {
			continue
		}
		listed, err := o.list(ctx, client, r.gvr, namespace)
		if errors.Is(err, errForbidden) {
			// As kubectl get does with several kinds: show what may be
			// read, name what may not, and fail at the end.
			forbidden = append(forbidden, err)
			continue
		}
		if err != nil {
			return err
		}
		objs = append(objs, listed...)
	}
	rows := selectRows(fleet.Build(in, objs), filter, matchingLabels(objs, shown))
	markWaiting(ctx, client, in, rows, objs)
	o.skipped = skippedAtAdmission(in, objs)
	if err := o.print(rows); err != nil {
		return err
	}
	if err := o.summary(rows); err != nil {
		return err
	}
	return errors.Join(forbidden...)
}

// errForbidden marks a list call the user's RBAC refuses.
var errForbidden = errors.New("forbidden")

// rowKey names a row's object: namespace, kind and name.
type rowKey struct{ namespace, kind, name string }

// matchingLabels is the set of objs whose labels sel matches (nil: every
// object, when sel is empty).
func matchingLabels(objs []*unstructured.Unstructured, sel labels.Selector) map[rowKey]bool {
	if sel.Empty() {
		return nil
	}
	out := map[rowKey]bool{}
	for _, o := range objs {
		if sel.Matches(labels.Set(o.GetLabels())) {
			out[rowKey{o.GetNamespace(), o.GetKind(), o.GetName()}] = true
		}
	}
	return out
}

// neededFor: Pods are listed for every workload's counts, and ReplicaSets
// and Jobs for Deployments' and CronJobs' Pods.
func neededFor(resource string, filter statusFilter) bool {
	switch resource {
	case "pods":
		return true
	case "replicasets":
		return filter["deployments"] != nil
	case "jobs":
		return filter["cronjobs"] != nil
	}
	return false
}

// selectRows keeps the rows the arguments name whose objects are in
// labelled (every row when labelled is nil).
func selectRows(rows []fleet.Row, filter statusFilter, labelled map[rowKey]bool) []fleet.Row {
	if filter == nil && labelled == nil {
		return rows
	}
	var out []fleet.Row
	for _, r := range rows {
		if labelled != nil && !labelled[rowKey{r.Namespace, r.Kind, r.Name}] {
			continue
		}
		if filter != nil {
			names, ok := filter[resourceOf(r.Kind)]
			if !ok || (len(names) > 0 && !names[r.Name]) {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// list reads every object of gvr with list calls of PageSize objects.
func (o *StatusOptions) list(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource, namespace string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{Limit: o.PageSize}
	for {
		page, err := client.Resource(gvr).Namespace(namespace).List(ctx, opts)
		if apierrors.IsForbidden(err) {
			where := "namespace " + namespace
			if namespace == "" {
				where = "all namespaces"
			}
			return nil, fmt.Errorf("listing %s in %s: %w: kubectl inject status is read-only and needs only get and list on %s (RBAC): %w", gvr.Resource, where, errForbidden, gvr.GroupResource(), err)
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		for i := range page.Items {
			item := &page.Items[i]
			item.SetAPIVersion(gvr.GroupVersion().String())
			item.SetKind(kindOfList(page.GetKind()))
			out = append(out, item)
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

func kindOfList(listKind string) string { return strings.TrimSuffix(listKind, "List") }
