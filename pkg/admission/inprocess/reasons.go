package inprocess

import (
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
)

// Reasons the policy's binding leaves a Pod out for, besides the core's
// (namespace_not_selected, system_namespace, labels_not_selected), as
// Binding.Explain gives them.
const (
	// ReasonNamespaceExcluded: the namespace is in --exclude-namespaces.
	ReasonNamespaceExcluded inject.Reason = "namespace_excluded"
	// ReasonNamespaceNotEnabled: the namespace lacks the label that
	// enables injection (kubectl inject enable).
	ReasonNamespaceNotEnabled inject.Reason = "namespace_not_enabled"
)

// reasonRows describe the codes this package declares.
var reasonRows = []reason.Row{
	reason.NewRow(ReasonNamespaceExcluded, byAdmission, "not seen by the policy", "the Pod's namespace is in the policy's --exclude-namespaces"),
	reason.NewRow(ReasonNamespaceNotEnabled, byAdmission, "not seen by the policy", "the Pod's namespace lacks the label that enables injection (kubectl inject enable), and the policy names no namespaces"),
}

var byAdmission = []reason.Giver{reason.Admission}

// ReasonRows returns the rows of the codes this package declares.
func ReasonRows() []reason.Row { return append([]reason.Row(nil), reasonRows...) }
