package inject

import (
	"fmt"
	"strings"

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
			at := fmt.Sprintf("%s[%d] (%s)", l.field, i, scalarField(c, "name"))
			sc := mapValue(c, "securityContext")
			if scalarField(sc, "privileged") == "true" {
				out = append(out, at+": securityContext.privileged is true")
			}
			if scalarField(sc, "allowPrivilegeEscalation") == "true" {
				out = append(out, at+": securityContext.allowPrivilegeEscalation is true")
			}
			if scalarField(sc, "runAsUser") == "0" {
				out = append(out, at+": securityContext.runAsUser is 0 (root)")
			}
			if add := scalarItemsOf(mapValue(mapValue(sc, "capabilities"), "add")); len(add) > 0 {
				out = append(out, at+": securityContext.capabilities.add: "+strings.Join(add, ", "))
			}
		}
	}
	for i, v := range t.Volumes {
		if mapValue(v, "hostPath") != nil {
			out = append(out, fmt.Sprintf("volumes[%d] (%s): hostPath %s mounts the node's filesystem", i, scalarField(v, "name"), scalarField(mapValue(v, "hostPath"), "path")))
		}
	}
	return out
}

func scalarItemsOf(seq *yaml.Node) []string {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]string, 0, len(seq.Content))
	for _, n := range seq.Content {
		out = append(out, n.Value)
	}
	return out
}
