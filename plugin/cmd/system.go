package cmd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
)

// guardSystemNamespaces settles, as skipped with system_namespace, the
// targets of system namespaces (kube-system, ...) that a selection (--all,
// -A, -l) reached without the command line naming their namespace with
// -n: a sidecar that cannot start there stops the cluster's own Pods. An
// object named on its own (TYPE/NAME, -f) or in a namespace named with -n
// is processed, after a warning per namespace.
func (o *Options) guardSystemNamespaces(targets []target) []target {
	selection := o.All || o.AllNamespaces || o.Selector != ""
	named := func(ns string) bool { return o.enforceNamespace && !o.AllNamespaces && o.namespace == ns }
	warned := map[string]bool{}
	for i, t := range targets {
		if t.settled != nil || !inject.IsSystemNamespace(t.Namespace) {
			continue
		}
		if selection && !named(t.Namespace) {
			r := live.Result{
				Ref: live.Ref(t.Mapping.GroupVersionKind, t.Name), Namespace: t.Namespace,
				Action: inject.Skipped, Reason: inject.ReasonSystemNamespace,
				Message: fmt.Sprintf("%s is a system namespace; name it with -n %s to inject it", t.Namespace, t.Namespace),
			}
			targets[i] = target{Target: t.Target, settled: &r, line: o.resultLine(r)}
			continue
		}
		warned[t.Namespace] = true
	}
	namespaces := slices.Sorted(maps.Keys(warned))
	for _, ns := range namespaces {
		fmt.Fprintf(o.ErrOut, "Warning: %s is a system namespace: a sidecar that cannot start there stops the cluster's own Pods\n", ns)
	}
	return targets
}
