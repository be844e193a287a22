package fleet

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The labels by which a StatefulSet's and a DaemonSet's controllers mark
// the revision a Pod was made from, and the DaemonSet annotation holding
// the revision its template is at.
const (
	statefulSetRevisionLabel = "controller-revision-hash"
	daemonSetRevisionLabel   = "pod-template-generation"
	daemonSetGeneration      = "deprecated.daemonset.template.generation"
)

// revision is what a Pod of an OnDelete StatefulSet or DaemonSet carries
// when it was made from the workload's template as it is now.
type revision struct {
	label, value string
}

// onDeleteRevision reports an OnDelete StatefulSet or DaemonSet, and the
// revision of its template (nil while its controller has not said). Under OnDelete
// the controller never replaces a Pod by itself, and a StatefulSet's
// status.currentRevision stays where it was, so a Pod made from an older
// template (a restart annotation, a change the record does not show) is
// told by its revision label alone.
func onDeleteRevision(o *unstructured.Unstructured) (bool, *revision) {
	strategy, _, _ := unstructured.NestedString(o.Object, "spec", "updateStrategy", "type")
	if strategy != "OnDelete" {
		return false, nil
	}
	rev, ok := revisionOf(o)
	return ok, rev
}

// revisionOf returns the revision of a StatefulSet's or DaemonSet's
// template, whatever its update strategy (nil while its controller has
// not said), and false for other kinds.
func revisionOf(o *unstructured.Unstructured) (*revision, bool) {
	switch o.GetKind() {
	case "StatefulSet":
		if update, _, _ := unstructured.NestedString(o.Object, "status", "updateRevision"); update != "" {
			return &revision{statefulSetRevisionLabel, update}, true
		}
	case "DaemonSet":
		if gen := o.GetAnnotations()[daemonSetGeneration]; gen != "" {
			return &revision{daemonSetRevisionLabel, gen}, true
		}
	default:
		return nil, false
	}
	return nil, true
}

// olderRevision reports a Pod of an OnDelete workload (r) that was made
// from an older template than the workload's.
func (r *Row) olderRevision(pod *unstructured.Unstructured) bool {
	return r.revision.older(pod)
}

// older reports a Pod whose revision label names another revision than
// r (false when r is nil: not known).
func (r *revision) older(pod *unstructured.Unstructured) bool {
	if r == nil {
		return false
	}
	got, ok := pod.GetLabels()[r.label]
	return ok && got != r.value
}

// OlderRevision reports a Pod of a StatefulSet or DaemonSet, whatever its
// update strategy, made from an older revision of its template than
// workload's own (its controller's revision label says), terminating or
// not; false for other kinds, and while the controller has not said.
// A restart waits until no such Pod is left.
func OlderRevision(workload, pod *unstructured.Unstructured) bool {
	rev, _ := revisionOf(workload)
	return rev.older(pod)
}

// RevisionLabel returns the label by which a StatefulSet's or DaemonSet's
// controller marks a Pod made from its template as it is now, and its
// value: a Pod upgraded in place to the template gets it, so that the
// controller and status count it as updated. ok is false for other kinds
// and while the controller has not said.
func RevisionLabel(workload *unstructured.Unstructured) (label, value string, ok bool) {
	rev, _ := revisionOf(workload)
	if rev == nil {
		return "", "", false
	}
	return rev.label, rev.value, true
}
