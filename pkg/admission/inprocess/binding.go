package inprocess

import (
	"encoding/json"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// Binding is the mutating binding's selection, as the API server applies
// it before the policy runs: the Pod's namespace (its labels, and
// kubernetes.io/metadata.name) and the Pod's labels.
type Binding struct {
	Namespaces, Objects labels.Selector
}

// LoadBindingObject reads the selection of a mutating binding (JSON), as
// compiled or as the API server stores it.
func LoadBindingObject(data []byte) (Binding, error) {
	var err error
	var b admissionregistrationv1.MutatingAdmissionPolicyBinding
	if err := json.Unmarshal(data, &b); err != nil {
		return Binding{}, fmt.Errorf("reading the mutating binding: %w", err)
	}
	sel := Binding{Namespaces: labels.Everything(), Objects: labels.Everything()}
	if m := b.Spec.MatchResources; m != nil {
		if m.NamespaceSelector != nil {
			if sel.Namespaces, err = metav1.LabelSelectorAsSelector(m.NamespaceSelector); err != nil {
				return Binding{}, err
			}
		}
		if m.ObjectSelector != nil {
			if sel.Objects, err = metav1.LabelSelectorAsSelector(m.ObjectSelector); err != nil {
				return Binding{}, err
			}
		}
	}
	return sel, nil
}

func namespaceSet(ns string, nsLabels map[string]string) labels.Set {
	set := labels.Set{corev1.LabelMetadataName: ns}
	for k, v := range nsLabels {
		set[k] = v
	}
	return set
}

// Explain says why the binding leaves a Pod out, in the terms of the
// settings it was compiled from: a reason code, a message and the command
// that changes it; "" when it selects the Pod.
func (b Binding) Explain(ns string, nsLabels, podLabels map[string]string, in *inject.Injector) (code inject.Reason, message, hint string) {
	sel := in.Settings().Policy
	profileFlag := ""
	if in.Profile() != "" {
		profileFlag = " --profile " + in.Profile()
	}
	if !b.Namespaces.Matches(namespaceSet(ns, nsLabels)) {
		key := naming.NamespaceLabelFor(in.Profile())
		switch {
		case sel.ExcludesNamespace(ns):
			return ReasonNamespaceExcluded, fmt.Sprintf("namespace %s is excluded (--exclude-namespaces)", ns), "apply the policy without it in --exclude-namespaces"
		case len(sel.Namespaces) > 0:
			return inject.ReasonNamespaceNotSelect, fmt.Sprintf("namespace %s is not among the policy's namespaces (%s)", ns, strings.Join(sel.Namespaces, ", ")),
				"apply the policy with --namespaces " + strings.Join(append(append([]string(nil), sel.Namespaces...), ns), ",")
		case inject.IsSystemNamespace(ns):
			return inject.ReasonSystemNamespace, fmt.Sprintf("%s is a system namespace: the policy never injects there unless --namespaces names it", ns),
				"apply the policy with --namespaces " + ns + " (its Pods run the cluster)"
		default:
			return ReasonNamespaceNotEnabled, fmt.Sprintf("namespace %s is not enabled: it lacks the label %s=%s", ns, key, naming.NamespaceEnabled),
				"kubectl inject enable " + ns + profileFlag
		}
	}
	if !b.Objects.Matches(labels.Set(podLabels)) {
		return inject.ReasonLabelsNotSelected, fmt.Sprintf("the Pod's labels do not match the policy's selector %q", sel.Selector), "label the Pod's template to match, or apply the policy with another --selector"
	}
	return "", "", ""
}

// Param is the parameter object a binding's paramRef names (a ConfigMap
// of the Pod's namespace), for Admit.
func Param(kind, name string) runtime.Object {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}, ObjectMeta: metav1.ObjectMeta{Name: name}}
}
