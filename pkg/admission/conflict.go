package admission

import (
	"fmt"
	"strings"
)

// addConflictVariable declares variables.conflict: the core's conflict
// message for this Pod, or "" when the template can be added. The checks
// run in the core's order (containers, init containers, volumes, then the
// added sidecars' ports), so the first conflict named is the core's.
func (c *compiler) addConflictVariable() {
	c.variable("conflict", c.conflictExpr())
}

// conflictVariables are the variables the validating policy needs to name
// a conflict: the presence flags and the conflict itself.
func (c *compiler) conflictVariables() []namedCondition {
	var out []namedCondition
	for _, v := range c.vars {
		out = append(out, v)
		if v.Name == "conflict" {
			break
		}
	}
	return out
}

func (c *compiler) conflictExpr() string {
	var b strings.Builder
	for _, it := range c.items {
		msg := fmt.Sprintf("spec.%s: %s %q already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)", it.list, it.what(), it.name)
		fmt.Fprintf(&b, "!variables.%s && !(%s) ? %s : ", it.flag, it.identicalExpr(), celString(msg))
	}
	for _, it := range c.items {
		if it.list == "volumes" {
			continue
		}
		ports, _ := it.value.(map[string]any)["ports"].([]any)
		for _, p := range ports {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			uses, ok := portExpr(pm)
			if !ok {
				continue
			}
			anyUses := fmt.Sprintf("object.spec.containers.exists(x, %s) || (has(object.spec.initContainers) && object.spec.initContainers.exists(x, %s))", uses, uses)
			// The core names the last container using the port.
			user := fmt.Sprintf("(has(object.spec.initContainers) && object.spec.initContainers.exists(x, %s) ? object.spec.initContainers.filter(x, %s).map(x, x.name) : object.spec.containers.filter(x, %s).map(x, x.name))", uses, uses, uses)
			msg := fmt.Sprintf("spec.containers: sidecar %q port %v is already used by container ", it.name, pm["containerPort"])
			fmt.Fprintf(&b, "variables.%s && (%s) ? %s + '\"' + %s[size(%s) - 1] + '\"' : ", it.flag, anyUses, celString(msg), user, user)
		}
	}
	b.WriteString(`""`)
	return b.String()
}

// portExpr is a CEL predicate on a container x: it declares the port pm
// (same number and protocol, TCP when unset).
func portExpr(pm map[string]any) (string, bool) {
	num, err := celValue(pm["containerPort"])
	if err != nil || pm["containerPort"] == nil {
		return "", false
	}
	proto, _ := pm["protocol"].(string)
	if proto == "" {
		proto = "TCP"
	}
	return fmt.Sprintf(`has(x.ports) && x.ports.exists(q, q.containerPort == %s && (has(q.protocol) ? q.protocol : "TCP") == %s)`, num, celString(proto)), true
}
