package cmd

import (
	"github.com/kinject/kubectl-inject/pkg/admission/inprocess"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/reason"
	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/pkg/sizing"
)

// reasonAlreadyInjected: explain's verdict on a Pod that carries a record
// of the profile already (injected when built), which the policy leaves
// as it is.
const reasonAlreadyInjected reason.Code = "already_injected"

// Reasons of kubectl inject size besides sizing's.
const (
	reasonNoSidecar    reason.Code = "no_sidecar"
	reasonNoParameters reason.Code = "no_resource_parameters"
	// reasonInPodTemplate: the sidecar is in the workload's pod template
	// (injected by kubectl inject or inject-fn), whose values a resize of
	// its Pods would contradict: the annotations belong in the template.
	reasonInPodTemplate reason.Code = "in_pod_template"
)

// commandReasonRows describe the codes the commands of this package
// declare (explain's, and size's besides pkg/sizing's).
var commandReasonRows = []reason.Row{
	reason.NewRow(reasonAlreadyInjected, []reason.Giver{reason.Explain}, "left as it is", "the Pod carries a record of the profile already (injected when built), so the policy leaves it as it is"),
	reason.NewRow(reasonNoSidecar, bySize, "not sized", "none of the workload's Pods runs the profile's sidecar"),
	reason.NewRow(reasonNoParameters, bySize, "not sized", "the template declares no override annotation for the container's resource requests, so nothing could be written"),
	reason.NewRow(reasonInPodTemplate, bySize, "not applied", "the sidecar is in the workload's pod template (injected by kubectl inject or inject-fn): the annotations belong in the template, which a resize of its Pods would contradict"),
}

var bySize = []reason.Giver{reason.Size}

// reasonRows are every code any command reports, one row each: the
// core's table first, then restart's and status's, the admission
// policy's binding's, size's, and this package's.
func reasonRows() []reason.Row {
	var rows []reason.Row
	for _, r := range inject.ReasonRules() {
		rows = append(rows, r.Row())
	}
	rows = append(rows, rollout.ReasonRows()...)
	rows = append(rows, inprocess.ReasonRows()...)
	rows = append(rows, sizing.ReasonRows()...)
	return append(rows, commandReasonRows...)
}

// reasonRowOf is the row of code.
func reasonRowOf(code reason.Code) (reason.Row, bool) {
	for _, r := range reasonRows() {
		if r.Code == code {
			return r, true
		}
	}
	return reason.Row{}, false
}
