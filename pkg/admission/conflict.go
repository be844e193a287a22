package admission

import (
	"fmt"
	"strings"
)

// addConflictVariable declares variables.conflict: the core's conflict
// message for this Pod, or "" when the template can be added. The checks
// run in the core's order (containers, init containers, volumes, then the
// added sidecars' ports), so the first conflict named is the core's. Each
// check is a variable of its own (same_c0: the Pod's envoy is the
// template's; users_c0_0: the containers using the first port of c0).
func (c *compiler) addConflictVariable() {
	var b strings.Builder
	for _, it := range c.items {
		c.variable("same_"+it.flag, it.identicalExpr())
		msg := fmt.Sprintf("spec.%s: %s %q already exists and was not injected by kubectl-inject (rename it, or remove it so the template's can be added)", it.list, it.what(), it.name)
		fmt.Fprintf(&b, "!variables.%s && !variables.same_%s ? %s :\n", it.flag, it.flag, celString(msg))
	}
	for _, it := range c.items {
		if it.list == "volumes" {
			continue
		}
		ports, _ := it.value.(map[string]any)["ports"].([]any)
		for j, p := range ports {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			uses, ok := portExpr(pm)
			if !ok {
				continue
			}
			users := fmt.Sprintf("users_%s_%d", it.flag, j)
			// In the core's order: the last container using the port is named.
			c.variable(users, fmt.Sprintf("object.spec.containers.filter(x, %s).map(x, x.name) + (has(object.spec.initContainers) ? object.spec.initContainers.filter(x, %s).map(x, x.name) : [])", uses, uses))
			msg := fmt.Sprintf("spec.containers: sidecar %q port %v is already used by container ", it.name, pm["containerPort"])
			fmt.Fprintf(&b, "variables.%s && size(variables.%s) > 0 ? %s + '\"' + variables.%s[size(variables.%s) - 1] + '\"' :\n", it.flag, users, celString(msg), users, users)
		}
	}
	b.WriteString(`""`)
	c.variable("conflict", b.String())
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
