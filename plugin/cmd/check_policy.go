package cmd

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// checkPolicy compiles the policy the flags describe and compares it with
// what is installed, then checks the namespaces it matches and their
// workloads.
func (o *CheckOptions) checkPolicy(ctx context.Context, c *checkClients) {
	o.Policy.ErrOut = io.Discard // compile warnings are for policy; check reports
	if c.mapServed && !o.Policy.Flags.TemplateGiven() {
		// The installed policy's configuration is current: compiled again
		// by this version, with the flags given over it.
		name := admission.ObjectName(o.Policy.Name, o.Policy.Flags.Profile)
		installed, policy, err := installedConfig(ctx, c.dynamic, o.Policy.Flags.Profile, name, o.Policy.Flags.StaticDir)
		switch {
		case err != nil:
			o.add("policy", checkWarn, err.Error()+"; current is the embedded default", "")
		case installed != nil:
			o.Policy.base = installed
			if policy.file == "" {
				o.installed = policy.name
			}
		}
	}
	in, p, err := o.Policy.compile()
	if err != nil {
		o.add("policy", checkFail, "the template does not compile: "+err.Error(), "")
		return
	}
	// Only a template that binds ports it neither declares nor reserves
	// has a line here.
	for _, w := range config.PortWarnings(in.Template()) {
		o.add("template", checkWarn, w, "list the port under reservedPorts in the template")
	}
	if c.mapServed {
		o.checkInstalled(ctx, c, p)
		o.checkStatic(ctx, c, p)
	}
	namespaces := o.checkNamespaces(ctx, c, in.Settings().Policy)
	if len(namespaces) == 0 {
		return
	}
	o.checkReferences(ctx, c, in, p, namespaces)
	o.checkWorkloads(ctx, c, in, namespaces)
}

// applyHint is the command that installs the policy the flags describe:
// with no template flag, the installed policy's own configuration again.
func (o *CheckOptions) applyHint() string {
	if o.installed != "" {
		name := ""
		if o.Policy.Name != admission.DefaultName {
			name = " --name " + o.Policy.Name
		}
		return fmt.Sprintf(`kubectl get mutatingadmissionpolicy %s -o jsonpath='{.metadata.annotations.sidecar\.kinject\.dev/config}' > current.yaml && kubectl inject policy --apply --template current.yaml%s`, o.installed, name)
	}
	args := []string{"kubectl inject policy --apply"}
	if o.Policy.Flags.Profile != "" {
		args = append(args, "--profile "+o.Policy.Flags.Profile)
	}
	if o.Policy.Flags.TemplateFile != "" {
		args = append(args, "--template "+o.Policy.Flags.TemplateFile)
	}
	return strings.Join(args, " ") + " (with the flags given here; --diff first shows the change)"
}

// checkInstalled compares the four installed objects with the compiled ones
// by their template and policy hashes.
func (o *CheckOptions) checkInstalled(ctx context.Context, c *checkClients, p *admission.Policy) {
	const category = "policy"
	objs, err := p.Objects()
	if err != nil {
		o.add(category, checkFail, err.Error(), "")
		return
	}
	var missing, stale []string
	var installedTemplate string
	for _, data := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			o.add(category, checkFail, err.Error(), "")
			return
		}
		gvr := policyResource(u.GetKind())
		ref := strings.ToLower(u.GetKind()) + "/" + u.GetName()
		got, err := c.dynamic.Resource(gvr).Get(ctx, u.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, ref)
			continue
		case err != nil:
			o.add(category, checkFail, fmt.Sprintf("cannot read %s: %s", ref, readError(err)), "")
			return
		}
		ann := got.GetAnnotations()
		if u.GetKind() == admission.KindMutatingPolicy {
			installedTemplate = ann[admission.TemplateHashAnnotation]
		}
		if ann[admission.PolicyHashAnnotation] != p.Hash {
			stale = append(stale, ref)
		}
	}
	current := o.Policy.Flags.Profile
	if current == "" {
		current = "the default profile"
	} else {
		current = "profile " + current
	}
	switch {
	case len(missing) == len(objs) && o.Policy.Flags.StaticDir != "":
		o.add(category, checkOK, fmt.Sprintf("%s (%s) is not installed through the API", p.Name, current), "")
	case len(missing) == len(objs):
		o.add(category, checkWarn, fmt.Sprintf("%s (%s) is not installed", p.Name, current), o.applyHint())
	case len(missing) > 0:
		o.add(category, checkFail, fmt.Sprintf("%s is installed in part: %s missing", p.Name, strings.Join(missing, ", ")), o.applyHint())
	case installedTemplate != "" && installedTemplate != p.TemplateHash:
		o.add(category, checkFail, fmt.Sprintf("%s injects an older template (%s; current %s): new Pods get the old sidecar", p.Name, installedTemplate, p.TemplateHash), o.applyHint())
	case len(stale) > 0:
		o.add(category, checkFail, fmt.Sprintf("%s was compiled with other settings or by another version: %s", p.Name, strings.Join(stale, ", ")), o.applyHint())
	default:
		o.add(category, checkOK, fmt.Sprintf("%s (%s) is installed and current (template %s)", p.Name, current, p.TemplateHash), "")
	}
	if len(missing) < len(objs) {
		o.apiTemplate = installedTemplate
	}
	o.otherPolicies(ctx, c, p)
}

// otherPolicies lists the other profiles' (or names') policies installed.
func (o *CheckOptions) otherPolicies(ctx context.Context, c *checkClients, p *admission.Policy) {
	list, err := listInstalledPolicies(ctx, c.dynamic, o.Policy.Flags.StaticDir)
	if err != nil {
		return // the check above said what it could not read
	}
	for _, item := range list {
		if item.GetName() == p.Name || item.GetName() == p.Name+admission.StaticSuffix {
			continue
		}
		o.add("policy", checkOK, fmt.Sprintf("also installed: %s (template %s; check it with its own --profile and --template)",
			item.GetName(), item.GetAnnotations()[admission.TemplateHashAnnotation]), "")
	}
}

// checkNamespaces lists the namespaces the policy matches: those named
// by --namespaces, else those labelled enabled for the profile, without
// the system and excluded ones. It returns them.
func (o *CheckOptions) checkNamespaces(ctx context.Context, c *checkClients, sel inject.Policy) []string {
	const category = "namespaces"
	key := naming.NamespaceLabelFor(o.Policy.Flags.Profile)
	excluded := map[string]bool{}
	for _, ns := range sel.ExcludeNamespaces {
		excluded[ns] = true
	}
	var matched []string
	if len(sel.Namespaces) > 0 {
		for _, ns := range sel.Namespaces {
			_, err := c.dynamic.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				o.add(category, checkWarn, fmt.Sprintf("namespace %s, named by --namespaces, does not exist", ns), "kubectl create namespace "+ns)
			case err != nil:
				o.add(category, checkFail, fmt.Sprintf("cannot read namespace %s: %s", ns, readError(err)), "")
			case !excluded[ns]:
				matched = append(matched, ns)
			}
		}
	} else {
		list, err := c.dynamic.Resource(namespacesResource).List(ctx, metav1.ListOptions{LabelSelector: key + "=" + naming.NamespaceEnabled})
		if err != nil {
			o.add(category, checkFail, "cannot list namespaces: "+readError(err), "")
			return nil
		}
		for _, item := range list.Items {
			ns := item.GetName()
			switch {
			case inject.IsSystemNamespace(ns):
				o.add(category, checkWarn, fmt.Sprintf("%s is labelled %s=%s, but the policy leaves system namespaces out", ns, key, naming.NamespaceEnabled),
					"to inject there, apply the policy with --namespaces "+ns)
			case excluded[ns]:
				o.add(category, checkWarn, fmt.Sprintf("%s is labelled %s=%s, but --exclude-namespaces leaves it out", ns, key, naming.NamespaceEnabled), "")
			default:
				matched = append(matched, ns)
			}
		}
	}
	if len(matched) == 0 {
		o.add(category, checkWarn, "no namespace is enabled: the policy injects no Pod", "kubectl inject enable NAMESPACE"+profileFlag(o.Policy.Flags.Profile))
		return nil
	}
	o.add(category, checkOK, "enabled: "+strings.Join(matched, ", "), "")
	return matched
}

func profileFlag(profile string) string {
	if profile == "" {
		return ""
	}
	return " --profile " + profile
}

// checkReferences reports, per matched namespace, what the sidecar needs
// that the namespace lacks.
func (o *CheckOptions) checkReferences(ctx context.Context, c *checkClients, in *inject.Injector, p *admission.Policy, namespaces []string) {
	const category = "namespaces"
	refs := in.Template().References()
	if len(refs) == 0 {
		return
	}
	checker := &live.ReferenceChecker{Client: c.dynamic}
	for _, ns := range namespaces {
		missing, err := checker.Missing(ctx, ns, refs)
		switch {
		case err != nil:
			o.add(category, checkWarn, oneLine(err.Error()), "")
		case len(missing) > 0:
			what := make([]string, len(missing))
			for i, r := range missing {
				what[i] = fmt.Sprintf("%s (%s)", r, r.Field)
			}
			effect := "its Pods would wait for it"
			if p.Requires != nil && containsReference(missing, *p.Requires) {
				effect = "the policy leaves its new Pods as created"
			}
			o.add(category, checkFail, fmt.Sprintf("%s lacks %s that the sidecar needs: %s", ns, strings.Join(what, ", "), effect),
				"create it in "+ns)
		default:
			o.add(category, checkOK, fmt.Sprintf("%s has what the sidecar needs", ns), "")
		}
	}
}

func containsReference(list []template.Reference, r template.Reference) bool {
	for _, x := range list {
		if x.Kind == r.Kind && x.Name == r.Name {
			return true
		}
	}
	return false
}

// checkWorkloads summarizes, as kubectl inject status does, the workloads
// and Pods of the matched namespaces that are behind the template.
func (o *CheckOptions) checkWorkloads(ctx context.Context, c *checkClients, in *inject.Injector, namespaces []string) {
	const category = "workloads"
	st := &StatusOptions{PageSize: 500}
	var objs []*unstructured.Unstructured
	for _, ns := range namespaces {
		for _, r := range statusResources {
			listed, err := st.list(ctx, c.dynamic, r.gvr, ns)
			if err != nil {
				o.add(category, checkWarn, fmt.Sprintf("cannot list %s in %s: %s", r.gvr.Resource, ns, readError(err)), "")
				return
			}
			objs = append(objs, listed...)
		}
	}
	o.checkCompletion(in, objs)
	o.checkBudgets(ctx, c, namespaces)
	rows := fleet.Build(in, objs)
	attention := 0
	for _, r := range rows {
		if r.NeedsAttention() {
			attention++
		}
	}
	if attention > 0 {
		o.add(category, checkWarn, fmt.Sprintf("%d of %d workloads and Pods in the enabled namespaces run an older sidecar or have Pods behind their template", attention, len(rows)),
			"kubectl inject status -A"+profileFlag(o.Policy.Flags.Profile)+" lists them")
		return
	}
	o.add(category, checkOK, fmt.Sprintf("%d workloads and Pods in the enabled namespaces: none behind", len(rows)), "")
}
