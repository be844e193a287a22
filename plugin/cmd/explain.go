package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/inprocess"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/plugin/local"
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
	Flags local.Flags
	// NamespaceLabels are the labels of the objects' namespace with
	// --local (the cluster's otherwise).
	NamespaceLabels map[string]string
	Name            string
}

// NewCmdExplain returns the explain subcommand.
func NewCmdExplain(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExplainOptions{ConfigFlags: configFlags, IOStreams: streams, Flags: local.NewFlags(), Name: admission.DefaultName}
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
	errs = append(errs, o.Flags.ValidateProfileFlags()...)
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
	Injected bool   `json:"injected"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
	// Notes are what else is worth knowing (an outdated policy, a
	// reference --local could not check).
	Notes []string `json:"notes,omitempty"`
	// Sidecar is, for an existing Pod, its sidecar's state as kubectl
	// inject status reports it, and Restart the command that makes it
	// current.
	Sidecar string `json:"sidecar,omitempty"`
	Restart string `json:"restart,omitempty"`
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
	if ctx == nil {
		ctx = context.Background()
	}
	var client dynamic.Interface
	namespace := "default"
	if o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		namespace = *o.ConfigFlags.Namespace // -n names the objects' namespace with --local too
	}
	if !o.Flags.Local {
		cfg, err := o.ConfigFlags.ToRESTConfig()
		if err != nil {
			return fmt.Errorf("kubeconfig: %w", err)
		}
		if client, err = dynamic.NewForConfig(cfg); err != nil {
			return fmt.Errorf("client: %w", err)
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
	list, err := listInstalledPolicies(ctx, client)
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
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// podTemplates are the pod templates' paths in the kinds explain reads
// (those kubectl inject status shows), nil for a Pod.
var podTemplates = map[string][]string{
	"Pod": nil, "Deployment": {"spec", "template"}, "StatefulSet": {"spec", "template"}, "DaemonSet": {"spec", "template"},
	"ReplicaSet": {"spec", "template"}, "Job": {"spec", "template"}, "CronJob": {"spec", "jobTemplate", "spec", "template"},
}

func (o *ExplainOptions) targets(ctx context.Context, client dynamic.Interface, namespace string, args []string) ([]explainTarget, error) {
	var objs []*unstructured.Unstructured
	existing := false
	if len(o.Flags.Filenames) > 0 {
		for _, name := range o.Flags.Filenames {
			read, err := readObjects(name, o.In)
			if err != nil {
				return nil, err
			}
			objs = append(objs, read...)
		}
	} else {
		existing = true
		for _, arg := range args {
			typ, name, _ := strings.Cut(arg, "/")
			filter, err := parseStatusArgs([]string{typ})
			if err != nil {
				return nil, errors.New(strings.Replace(err.Error(), "kubectl inject status shows", "kubectl inject explain reads", 1))
			}
			for resource := range filter { // one kind
				obj, err := client.Resource(gvrOf(resource)).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, fmt.Errorf("%s: %s", arg, readError(err))
				}
				objs = append(objs, obj)
			}
		}
	}
	var out []explainTarget
	for _, obj := range objs {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		path, ok := podTemplates[obj.GetKind()]
		ref := strings.ToLower(obj.GetKind()) + "/" + obj.GetName()
		if !ok {
			continue // not a kind whose Pods a policy injects
		}
		pod := obj
		if path != nil {
			tmpl, found, _ := unstructured.NestedMap(obj.Object, path...)
			if !found {
				return nil, fmt.Errorf("%s: %s: is missing", ref, strings.Join(path, "."))
			}
			pod = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": tmpl["metadata"], "spec": tmpl["spec"]}}
			if pod.Object["metadata"] == nil {
				pod.Object["metadata"] = map[string]any{}
			}
			pod.SetName(obj.GetName())
			pod.SetNamespace(obj.GetNamespace())
		}
		out = append(out, explainTarget{ref: ref, obj: obj, pod: pod, existing: existing && path == nil})
	}
	if len(out) == 0 {
		return nil, errors.New("no Pod or workload to explain")
	}
	return out, nil
}

// readObjects reads the objects of a YAML or JSON stream.
func readObjects(name string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []*unstructured.Unstructured
	for i, n := range nodes {
		b, err := n.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// explainer holds the policy of one profile, compiled and loaded.
type explainer struct {
	o         *ExplainOptions
	client    dynamic.Interface
	in        *inject.Injector
	policy    *admission.Policy
	server    *inprocess.Policy
	installed bool
	notes     []string
	binding   inprocess.Binding
}

func (o *ExplainOptions) evaluator(ctx context.Context, client dynamic.Interface) (*explainer, error) {
	ev := &explainer{o: o, client: client}
	po := &PolicyOptions{ConfigFlags: o.ConfigFlags, IOStreams: genericiooptions.IOStreams{In: o.In, Out: io.Discard, ErrOut: io.Discard}, Flags: o.Flags, Name: o.Name}
	objectName := admission.ObjectName(o.Name, o.Flags.Profile)
	var installedHash string
	if client != nil && !o.Flags.TemplateGiven() {
		cfg, name, err := installedConfig(ctx, client, o.Flags.Profile, objectName)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			po.base, ev.installed = cfg, true
			obj, err := client.Resource(policyResource(admission.KindMutatingPolicy)).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("read mutatingadmissionpolicy/%s: %s", name, readError(err))
			}
			installedHash = obj.GetAnnotations()[admission.PolicyHashAnnotation]
		}
	}
	in, p, err := po.compile()
	if err != nil {
		return nil, err
	}
	ev.in, ev.policy = in, p
	switch {
	case client == nil:
	case !ev.installed:
		ev.notes = append(ev.notes, fmt.Sprintf("%s is not installed: nothing is injected at admission until kubectl inject policy --apply%s", p.Name, profileFlag(o.Flags.Profile)))
	case installedHash != p.Hash:
		ev.notes = append(ev.notes, fmt.Sprintf("%s was compiled by another version or with other settings: apply it again (kubectl inject check says how); explained as installed", p.Name))
	}
	objs, err := p.Objects()
	if err != nil {
		return nil, err
	}
	if ev.installed {
		// The objects the cluster runs, as it stores them.
		if objs, err = installedObjects(ctx, client, objs); err != nil {
			return nil, err
		}
	}
	if ev.server, err = inprocess.Load(objs); err != nil {
		return nil, err
	}
	if ev.binding, err = inprocess.LoadBindingObject(objs[1]); err != nil {
		return nil, err
	}
	return ev, nil
}

// installedObjects reads from the cluster the installed objects of the
// compiled ones (the same kinds and names, in the same order).
func installedObjects(ctx context.Context, client dynamic.Interface, compiled [][]byte) ([][]byte, error) {
	var out [][]byte
	for _, data := range compiled {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		got, err := client.Resource(policyResource(u.GetKind())).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read %s/%s: %s (kubectl inject check says what is installed)", kindLower(u.GetKind()), u.GetName(), readError(err))
		}
		b, err := got.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// explain evaluates the policy on one target's Pod.
func (ev *explainer) explain(ctx context.Context, t explainTarget) (Verdict, error) {
	p := ev.policy
	v := Verdict{Object: t.ref, Namespace: t.pod.GetNamespace(), Profile: ev.in.Profile(), Policy: p.Name, Installed: ev.installed, Template: p.TemplateHash,
		Notes: append([]string(nil), ev.notes...)}
	pod := t.pod
	if t.existing {
		// The Pod as it was created: without this profile's sidecar.
		plain, err := withoutInjection(ev.in, pod)
		if err != nil {
			return v, err
		}
		row := fleet.Build(ev.in, []*unstructured.Unstructured{t.obj})
		if len(row) == 1 && row[0].RecordedTemplate != "" {
			v.Sidecar = row[0].State
			if v.Sidecar == fleet.Outdated {
				v.Restart = restartHint(t.obj, ev.in.Profile())
			}
		}
		pod = plain
	}
	nsLabels, err := ev.namespaceLabels(ctx, v.Namespace)
	if err != nil {
		return v, err
	}
	if reason, msg, hint := ev.binding.Explain(v.Namespace, nsLabels, pod.GetLabels(), ev.in); reason != "" {
		v.Reason, v.Message, v.Hint = reason, msg, hint
		return v, nil
	}
	var param runtime.Object
	if p.Requires != nil {
		present, checked, err := ev.hasReference(ctx, v.Namespace, *p.Requires)
		if err != nil {
			return v, err
		}
		switch {
		case !checked:
			v.Notes = append(v.Notes, fmt.Sprintf("assumes %s exists in namespace %s (--local reads no cluster): without it the policy leaves new Pods as created", p.Requires, v.Namespace))
		case !present:
			v.Reason = "missing_reference"
			v.Message = fmt.Sprintf("namespace %s has no %s, which the sidecar needs (%s): the policy leaves new Pods as created", v.Namespace, p.Requires, p.Requires.Field)
			v.Hint = fmt.Sprintf("create %s in %s", p.Requires, v.Namespace)
			return v, nil
		}
		param = inprocess.Param(p.Requires.Kind, p.Requires.Name)
	}
	data, err := pod.MarshalJSON()
	if err != nil {
		return v, err
	}
	typed, err := inprocess.DecodePod(data)
	if err != nil {
		return v, fmt.Errorf("not a Pod the API server decodes: %w", err)
	}
	res, err := ev.server.Admit(typed, param)
	if err != nil {
		return v, err
	}
	ann := res.Pod.Annotations
	if _, ok := ann[ev.in.StatusAnnotation()]; ok && res.Matched {
		if _, had := pod.GetAnnotations()[ev.in.StatusAnnotation()]; !had {
			v.Injected = true
			v.Message = "injected: " + p.Name + " adds the sidecar (template " + p.TemplateHash + ")"
			return v, nil
		}
	}
	if !res.Matched {
		v.Reason, v.Message = "already_injected", "the Pod already carries a record of "+inject.ProfileName(ev.in.Profile())+" (injected when built): the policy leaves it as it is"
		return v, nil
	}
	if res.MutationError != nil {
		v.Reason, v.Message = "error", "the policy fails on this Pod and leaves it as created: "+res.MutationError.Error()
		return v, nil
	}
	code := ann[inject.SkippedAnnotationFor(ev.in.Profile())]
	if code == "" {
		code = string(inject.ReasonNotOptedIn)
	}
	v.Reason = code
	v.Message, v.Hint = skipWords(code, ev.in, res.Warnings)
	return v, nil
}

// skipWords says in words why the policy left a Pod alone, and what
// changes it.
func skipWords(code string, in *inject.Injector, warnings []string) (message, hint string) {
	key := inject.InjectAnnotationFor(in.Profile())
	why := ""
	if len(warnings) > 0 {
		_, why, _ = strings.Cut(warnings[0], ": ")
	}
	switch inject.Reason(code) {
	case inject.ReasonOptedOut:
		return fmt.Sprintf("opted out: the annotation %s is \"false\"", key), "remove the annotation " + key + " from the Pod (its workload's pod template)"
	case inject.ReasonNotOptedIn:
		return fmt.Sprintf("not opted in: the policy's mode is opt-in and the annotation %s is not \"true\"", key), "annotate the Pod's template " + key + `: "true"`
	case inject.ReasonHostNetwork:
		return "the Pod uses the host's network: a sidecar would share the node's ports", "kubectl inject policy --apply --inject-host-network" + profileFlag(in.Profile()) + " (for every such Pod)"
	case inject.ReasonOtherMesh:
		return "the Pod already has another mesh's proxy (" + strings.Join(inject.OtherMeshProxies(), " or ") + ")", "remove the other mesh's injection first"
	case inject.ReasonConflict:
		return "conflict: " + why, "change the Pod (or the template) so that they do not clash"
	case inject.ReasonInvalidObject:
		return "a value the core refuses: " + why, "fix the annotation the message names"
	case inject.ReasonInvalidStatus:
		return "a record it cannot read: " + why, "remove or repair the annotation the message names"
	}
	return "left alone (" + code + ")", ""
}

// namespaceLabels are the namespace's labels: the cluster's, or
// --namespace-labels with --local.
func (ev *explainer) namespaceLabels(ctx context.Context, ns string) (map[string]string, error) {
	if ev.client == nil {
		out := map[string]string{}
		for k, val := range ev.o.NamespaceLabels {
			out[k] = val
		}
		return out, nil
	}
	obj, err := ev.client.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read namespace %s: %s", ns, readError(err))
	}
	return obj.GetLabels(), nil
}

// hasReference reports whether ns holds ref; checked is false with
// --local.
func (ev *explainer) hasReference(ctx context.Context, ns string, ref inject.Reference) (present, checked bool, err error) {
	if ev.client == nil {
		return false, false, nil
	}
	missing, err := (&live.ReferenceChecker{Client: ev.client}).Missing(ctx, ns, []inject.Reference{ref})
	if err != nil {
		return false, true, err
	}
	return len(missing) == 0, true, nil
}

// withoutInjection is an existing Pod without the profile's injection:
// the Pod the policy saw.
func withoutInjection(in *inject.Injector, pod *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := pod.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out, entries := in.ProcessText(inject.OpUninject, data, 0)
	if len(entries) == 1 && entries[0].Action == inject.Failed {
		return nil, fmt.Errorf("%s", entries[0].Message)
	}
	plain := &unstructured.Unstructured{}
	if err := plain.UnmarshalJSON(out); err != nil {
		return nil, err
	}
	return plain, nil
}

// restartHint is the command that gives an existing Pod the current
// sidecar.
func restartHint(pod *unstructured.Unstructured, profile string) string {
	for _, ref := range pod.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return fmt.Sprintf("kubectl inject restart -n %s%s (its %s is restarted with its workload)", pod.GetNamespace(), profileFlag(profile), strings.ToLower(ref.Kind))
		}
	}
	return fmt.Sprintf("delete and create the Pod again (kubectl inject restart pod/%s -n %s --recreate%s)", pod.GetName(), pod.GetNamespace(), profileFlag(profile))
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
		fmt.Fprintf(&b, "%s in namespace %s, %s:\n", v.Object, v.Namespace, inject.ProfileName(v.Profile))
		fmt.Fprintf(&b, "  policy:   %s (%s, template %s)\n", v.Policy, state, v.Template)
		if v.Injected {
			fmt.Fprintf(&b, "  verdict:  %s\n", v.Message)
		} else {
			fmt.Fprintf(&b, "  verdict:  not injected: %s\n", v.Message)
		}
		if v.Hint != "" {
			fmt.Fprintf(&b, "  to change: %s\n", v.Hint)
		}
		if v.Sidecar != "" {
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
