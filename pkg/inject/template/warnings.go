package template

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Warnings lists what in the template widens the pod's privileges: a
// privileged container, privilege escalation, added capabilities, running
// as root, or a hostPath volume. A sidecar is injected into every selected
// workload, so such a template deserves a second look; with
// Settings.Strict they are errors.
func (t *Template) Warnings() []string {
	var out []string
	for _, l := range []struct {
		field string
		items []*yaml.Node
	}{{"containers", t.Containers}, {"initContainers", t.InitContainers}} {
		for i, c := range l.items {
			at := fmt.Sprintf("%s[%d] (%s)", l.field, i, nodes.ScalarField(c, "name"))
			sc := nodes.MapValue(c, "securityContext")
			if nodes.ScalarField(sc, "privileged") == "true" {
				out = append(out, at+": securityContext.privileged is true")
			}
			if nodes.ScalarField(sc, "allowPrivilegeEscalation") == "true" {
				out = append(out, at+": securityContext.allowPrivilegeEscalation is true")
			}
			if nodes.ScalarField(sc, "runAsUser") == "0" {
				out = append(out, at+": securityContext.runAsUser is 0 (root)")
			}
			if add := nodes.ScalarItems(nodes.MapValue(nodes.MapValue(sc, "capabilities"), "add")); len(add) > 0 {
				out = append(out, at+": securityContext.capabilities.add: "+strings.Join(add, ", "))
			}
		}
	}
	for i, v := range t.Volumes {
		if nodes.MapValue(v, "hostPath") != nil {
			out = append(out, fmt.Sprintf("volumes[%d] (%s): hostPath %s mounts the node's filesystem", i, nodes.ScalarField(v, "name"), nodes.ScalarField(nodes.MapValue(v, "hostPath"), "path")))
		}
	}
	return out
}
