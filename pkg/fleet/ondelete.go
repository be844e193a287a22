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
	kind := o.GetKind()
	if strategy != "OnDelete" || (kind != "StatefulSet" && kind != "DaemonSet") {
		return false, nil
	}
	if kind == "StatefulSet" {
		if update, _, _ := unstructured.NestedString(o.Object, "status", "updateRevision"); update != "" {
			return true, &revision{statefulSetRevisionLabel, update}
		}
	} else if gen := o.GetAnnotations()[daemonSetGeneration]; gen != "" {
		return true, &revision{daemonSetRevisionLabel, gen}
	}
	return true, nil
}

// olderRevision reports a Pod of an OnDelete workload (r) that was made
// from an older template than the workload's.
func (r *Row) olderRevision(pod *unstructured.Unstructured) bool {
	if r.revision == nil {
		return false
	}
	got, ok := pod.GetLabels()[r.revision.label]
	return ok && got != r.revision.value
}
