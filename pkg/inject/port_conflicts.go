package inject

import (
	"errors"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Ports the sidecars would take from the app: a port an app container
// declares, or a port parameter's value (annotated or computed) that names
// a sidecar's own port.

// checkPorts refuses sidecar ports that an app container already uses:
// both would bind the same port in the pod's shared network namespace.
// Each sidecar's declared ports are checked, then the ports the template
// reserves for it.
func (pt profileTarget) checkPorts(tpl *template.Template, sidecars []*yaml.Node) error {
	t := pt.podTarget
	used := map[string]string{}      // port: the container using it
	where := map[string]*yaml.Node{} // port: its entry in that container
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range nodes.SeqItems(nodes.MapValue(t.spec, list)) {
			for _, p := range nodes.SeqItems(nodes.MapValue(c, "ports")) {
				used[portKey(p)], where[portKey(p)] = nodes.ScalarField(c, "name"), p
			}
		}
	}
	for _, s := range sidecars {
		sidecar := nodes.ScalarField(s, "name")
		// The declared ports by their text (NUMBER/PROTOCOL), as the
		// app's are keyed, then the reserved ones.
		type use struct{ key, number, what string }
		var uses []use
		for _, p := range nodes.SeqItems(nodes.MapValue(s, "ports")) {
			uses = append(uses, use{portKey(p), nodes.ScalarField(p, "containerPort"), ""})
		}
		for _, r := range tpl.ReservedOf(sidecar) {
			uses = append(uses, use{r.Key(), strconv.Itoa(r.Port), r.What})
		}
		for _, u := range uses {
			app, clash := used[u.key]
			if !clash {
				continue
			}
			if owner, ok := pt.rest.owner(ConflictContainer, app); ok {
				return pt.conflict(message(MessagePortOwned, u.key, pt.specField("containers"), strconv.Quote(app), strconv.Quote(sidecar)), owner)
			}
			msg := message(MessagePortUsed, t.specField("containers"), strconv.Quote(sidecar), u.number, strconv.Quote(app))
			if u.what != "" {
				msg = message(MessagePortReserved, t.specField("containers"), strconv.Quote(sidecar), u.number, u.what, strconv.Quote(app))
			}
			return atNode(where[u.key], t.specField("containers"), &conflictError{msg})
		}
	}
	return nil
}

func portKey(p *yaml.Node) string {
	proto := nodes.ScalarField(p, "protocol")
	if proto == "" {
		proto = "TCP"
	}
	return nodes.ScalarField(p, "containerPort") + "/" + proto
}

// checkOverridePort refuses an override of a port parameter that names a
// port of the template's sidecars: the sidecar would proxy to itself.
func checkOverridePort(t *template.Template, p template.Parameter, where, key, value string) error {
	if p.Type != template.TypePort {
		return nil
	}
	if sp, taken := t.PortTaken(value); taken {
		return errors.New(message(MessagePortValue, where, strconv.Quote(key), strconv.Quote(value), strconv.Quote(sp.Container), sp.What))
	}
	return nil
}

// checkComputedPorts refuses a port that an expression computed from the
// Pod when it names a port of the sidecars. Run after checkPorts: a port
// the app declares is named as that conflict first.
func checkComputedPorts(t *template.Template, values map[string]string) error {
	for _, p := range t.Parameters {
		v, ok := values[p.Annotation]
		if !ok || p.Type != template.TypePort || p.Expression == "" {
			continue
		}
		if sp, taken := t.PortTaken(v); taken {
			return &conflictError{message(MessageComputedPort, p.Annotation, v, strconv.Quote(sp.Container), sp.What)}
		}
	}
	return nil
}
