package cmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/admission/inprocess"
	"github.com/kinject/kubectl-inject/pkg/fleet"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/rollout"
)

// explainer holds the policy of one profile, compiled and loaded.
type explainer struct {
	o         *ExplainOptions
	client    dynamic.Interface
	in        *inject.Injector
	policy    *admission.Policy
	server    *inprocess.Policy
	installed bool
	// static: the installed policy is the static manifests of --static.
	static  bool
	notes   []string
	binding inprocess.Binding
}

func (o *ExplainOptions) evaluator(ctx context.Context, client dynamic.Interface) (*explainer, error) {
	ev := &explainer{o: o, client: client}
	po := &PolicyOptions{ConfigFlags: o.ConfigFlags, IOStreams: genericiooptions.IOStreams{In: o.In, Out: io.Discard, ErrOut: io.Discard}, Flags: o.Flags, Name: o.Name}
	objectName := admission.ObjectName(o.Name, o.Flags.Profile)
	var installedHash string
	if client != nil && !o.Flags.TemplateGiven() {
		cfg, policy, err := installedConfig(ctx, client, o.Flags.Profile, objectName, o.Flags.StaticDir)
		if err != nil {
			return nil, err
		}
		if cfg != nil {
			po.base, ev.installed, ev.static = cfg, true, policy.file != ""
			if ev.static {
				// The static manifests are explained as the API server
				// runs them: their own names, no parameter.
				installedHash, err = staticPolicyHash(policy.file, policy.name)
			} else {
				installedHash, err = apiPolicyHash(ctx, client, policy.name)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	compile := admission.Compile
	if ev.static {
		compile = admission.CompileStatic
	}
	in, p, err := po.compileWith(compile)
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
	switch {
	case ev.static:
		// The objects the API server runs, as the files hold them.
		if objs, err = staticObjects(o.Flags.StaticDir, objs); err != nil {
			return nil, err
		}
	case ev.installed:
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
			return nil, fmt.Errorf("read %s/%s: %s (kubectl inject check says what is installed)", strings.ToLower(u.GetKind()), u.GetName(), readError(err))
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
			v.UpgradedInPlaceFrom = t.obj.GetAnnotations()[rollout.UpgradedInPlaceAnnotation(ev.in.Profile())]
		}
		pod = plain
	}
	nsLabels, err := ev.namespaceLabels(ctx, v.Namespace)
	if err != nil {
		return v, err
	}
	if code, msg, hint := ev.binding.Explain(v.Namespace, nsLabels, pod.GetLabels(), ev.in); code != "" {
		v.Reason, v.Message, v.Hint = code, msg, hint
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
			v.Reason = inject.ReasonMissingReference
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
		v.Reason, v.Message = reasonAlreadyInjected, "the Pod already carries a record of "+naming.ProfileName(ev.in.Profile())+" (injected when built): the policy leaves it as it is"
		return v, nil
	}
	if res.MutationError != nil {
		v.Reason, v.Message = rollout.ReasonError, "the policy fails on this Pod and leaves it as created: "+res.MutationError.Error()
		return v, nil
	}
	code, why := admission.MarkReason(ann[naming.SkippedAnnotationFor(ev.in.Profile())])
	if code == "" {
		code = string(inject.ReasonNotOptedIn)
	}
	v.Reason = inject.Reason(code)
	v.Message, v.Hint = skipWords(code, why, ev.in)
	return v, nil
}

// skipWords says in words why the policy left a Pod alone (code, and the
// core's message why), and what to do: the words of the code's row.
func skipWords(code, why string, in *inject.Injector) (message, hint string) {
	if rule, ok := inject.ReasonRuleOf(inject.Reason(code)); ok {
		return rule.Explained(in.Profile(), why)
	}
	if row, ok := reasonRowOf(inject.Reason(code)); ok {
		return "left alone (" + code + "): " + row.When, ""
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
func (ev *explainer) hasReference(ctx context.Context, ns string, ref template.Reference) (present, checked bool, err error) {
	if ev.client == nil {
		return false, false, nil
	}
	missing, err := (&live.ReferenceChecker{Client: ev.client}).Missing(ctx, ns, []template.Reference{ref})
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

// apiPolicyHash is the policy hash of the mutating policy name installed
// through the API.
func apiPolicyHash(ctx context.Context, client dynamic.Interface, name string) (string, error) {
	obj, err := client.Resource(policyResource(admission.KindMutatingPolicy)).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read mutatingadmissionpolicy/%s: %s", name, readError(err))
	}
	return obj.GetAnnotations()[admission.PolicyHashAnnotation], nil
}

// staticPolicyHash is the policy hash of the static mutating policy name
// read from file.
func staticPolicyHash(file, name string) (string, error) {
	list, err := readStaticPolicies(filepath.Dir(filepath.Dir(file)))
	if err != nil {
		return "", err
	}
	for _, u := range list {
		if u.GetName() == name {
			return u.GetAnnotations()[admission.PolicyHashAnnotation], nil
		}
	}
	return "", fmt.Errorf("%s: no mutatingadmissionpolicy/%s", file, name)
}
