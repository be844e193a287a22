package cmd

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// checkCompletion warns when the template's sidecar is classic and the
// enabled namespaces run Pods to completion (CronJobs, Jobs, Pods with
// restartPolicy Never or OnFailure): the policy leaves those Pods without
// the sidecar (runs_to_completion), since a classic one would keep them
// running after their app exits.
func (o *CheckOptions) checkCompletion(in *inject.Injector, objs []*unstructured.Unstructured) {
	sidecars := in.Template().ClassicSidecars()
	if sidecars == "" {
		return
	}
	var found []string
	for _, u := range objs {
		if runsToCompletion(u) {
			found = append(found, strings.ToLower(u.GetKind())+"/"+u.GetName()+" in "+u.GetNamespace())
		}
	}
	if len(found) == 0 {
		return
	}
	shown := found
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("%d more", len(found)-3))
	}
	o.add("template", checkWarn, fmt.Sprintf("sidecar %s is classic and %d objects in the enabled namespaces run Pods to completion (%s): their Pods are left without it (%s)",
		sidecars, len(found), strings.Join(shown, ", "), inject.ReasonRunsToCompletion),
		"kubectl inject policy --apply --native"+profileFlag(o.Policy.Flags.Profile)+" (a native sidecar stops once the app has exited; Kubernetes 1.29+)")
}

// runsToCompletion reports whether u is a CronJob, a Job that no CronJob
// owns, or a Pod that runs to completion and no Job owns: each counted
// once, at its top.
func runsToCompletion(u *unstructured.Unstructured) bool {
	owned := func(kind string) bool {
		return slices.ContainsFunc(u.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.Kind == kind })
	}
	switch u.GetKind() {
	case "CronJob":
		return true
	case "Job":
		return !owned("CronJob")
	case "Pod":
		policy, _, _ := unstructured.NestedString(u.Object, "spec", "restartPolicy")
		return slices.Contains(inject.CompletingRestartPolicies, policy) && !owned("Job")
	}
	return false
}
