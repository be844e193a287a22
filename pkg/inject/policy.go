package inject

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SelectsKind reports whether the policy's kinds take kind (compared
// without case; no kinds take every kind).
func (p Policy) SelectsKind(kind string) bool {
	return len(p.Kinds) == 0 || containsFold(p.Kinds, kind)
}

// SelectsAPIGroup reports whether the policy's API groups take group
// (compared without case; "" is the core group, which "core" names too;
// no groups take every group).
func (p Policy) SelectsAPIGroup(group string) bool {
	return len(p.APIGroups) == 0 || containsFold(p.APIGroups, group) || group == "" && containsFold(p.APIGroups, "core")
}

// ExcludesNamespace reports whether the policy leaves namespace ns out,
// whatever else selects it.
func (p Policy) ExcludesNamespace(ns string) bool { return containsFold(p.ExcludeNamespaces, ns) }

// selectObject decides whether an object is in scope at all (kind, group,
// namespace, labels). It does not look at opt-in/out annotations.
func (p Policy) selectObject(obj *yaml.Node) (Reason, string) {
	kind, group := nodes.ScalarField(obj, "kind"), apiGroup(nodes.ScalarField(obj, "apiVersion"))
	if !p.SelectsKind(kind) {
		return ReasonKindNotSelected, fmt.Sprintf("kind %s is not in %s", kind, strings.Join(p.Kinds, ","))
	}
	if !p.SelectsAPIGroup(group) {
		return ReasonKindNotSelected, fmt.Sprintf("API group %q is not in %s", group, strings.Join(p.APIGroups, ","))
	}
	meta := nodes.MapValue(obj, "metadata")
	ns := nodes.ScalarField(meta, "namespace")
	if ns == "" {
		ns = "default"
	}
	if len(p.Namespaces) > 0 && !containsFold(p.Namespaces, ns) {
		return ReasonNamespaceNotSelect, fmt.Sprintf("namespace %s is not in %s", ns, strings.Join(p.Namespaces, ","))
	}
	if p.ExcludesNamespace(ns) {
		return ReasonNamespaceNotSelect, fmt.Sprintf("namespace %s is excluded", ns)
	}
	if p.Selector != "" {
		ok, err := yaml.NewRNode(obj).MatchesLabelSelector(p.Selector)
		if err != nil || !ok {
			return ReasonLabelsNotSelected, fmt.Sprintf("labels do not match %q", p.Selector)
		}
	}
	return "", ""
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(v string) bool { return strings.EqualFold(v, s) })
}
