package cmd

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// skippedAtAdmission lists the Pods of objs that the profile's admission
// policy marked as left alone, "namespace/name" by reason code.
func skippedAtAdmission(in *inject.Injector, objs []*unstructured.Unstructured) map[string][]string {
	out := map[string][]string{}
	key := naming.SkippedAnnotationFor(in.Profile())
	for _, obj := range objs {
		if obj.GetKind() != "Pod" {
			continue
		}
		if mark, ok := obj.GetAnnotations()[key]; ok {
			reason, _ := admission.MarkReason(mark)
			out[reason] = append(out[reason], obj.GetNamespace()+"/"+obj.GetName())
		}
	}
	return out
}

// skippedLines say which Pods the admission policy left alone, one line
// per reason, the reasons sorted: "left alone at admission (conflict): 2
// Pods: shop/web-1, shop/web-2". Ten Pods are named at most.
func skippedLines(skipped map[string][]string) []string {
	reasons := slices.Sorted(maps.Keys(skipped))
	var out []string
	for _, r := range reasons {
		pods := append([]string(nil), skipped[r]...)
		sort.Strings(pods)
		named := pods
		if len(named) > 10 {
			named = append(named[:10:10], fmt.Sprintf("and %d more", len(pods)-10))
		}
		noun := "Pods"
		if len(pods) == 1 {
			noun = "Pod"
		}
		out = append(out, fmt.Sprintf("left alone at admission (%s): %d %s: %s", r, len(pods), noun, strings.Join(named, ", ")))
	}
	return out
}
