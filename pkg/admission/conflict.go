package admission

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// addConflictVariable declares variables.conflict: the core's message for
// a Pod it would fail, or "" when the template can be added. The checks
// run in the core's order (another profile's record it cannot read, an
// override value of the wrong type, then containers, init containers,
// volumes, the added sidecars' ports, and the template's labels and
// annotations), so the first problem named is the core's. Each check is a
// variable of its own (same_c0: the Pod's envoy is the template's;
// owners_c0: the other profiles whose records list envoy; users_c0_0: the
// containers using the first port of c0).
func (c *compiler) addConflictVariable() {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("size(variables.badRecord) > 0 ? %s + variables.badRecord[0] + %s :\n",
		celString("metadata.annotations: annotation "), celString(": not a valid status record (not as kubectl-inject writes it)")))
	b.WriteString(c.badValueChecks())
	for _, it := range c.items {
		c.variable("same_"+it.flag, it.identicalExpr())
		fields := []string{"volumes"}
		if it.list != "volumes" {
			fields = []string{"containers", "initContainers"}
		}
		c.variable("owners_"+it.flag, ownersExpr(listedPattern(fields, it.name)))
		what := fmt.Sprintf("%s %q (spec.%s)", it.what(), it.name, it.list)
		fmt.Fprintf(&b, "!variables.%s && size(variables.owners_%s) > 0 ? %s :\n", it.flag, it.flag, c.profileConflict(what, "variables.owners_"+it.flag+"[0]"))
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
			last := fmt.Sprintf("variables.%s[size(variables.%s) - 1]", users, users)
			owners := fmt.Sprintf("variables.others.filter(o, %s).map(o, o[0])", listsName("o[2]", last))
			proto, _ := pm["protocol"].(string)
			if proto == "" {
				proto = "TCP"
			}
			what := fmt.Sprintf("port %v/%s (spec.containers, sidecars ", pm["containerPort"], proto)
			fmt.Fprintf(&b, "variables.%s && size(variables.%s) > 0 && size(%s) > 0 ? %s + '\"' + %s + '\" and \"' + %s + %s :\n",
				it.flag, users, owners, celString(what), last, celString(it.name+`")`), strings.Replace(c.profileConflict("port", owners+"[0]"), celString("port is added by "), celString(" is added by "), 1))
			msg := fmt.Sprintf("spec.containers: sidecar %q port %v is already used by container ", it.name, pm["containerPort"])
			fmt.Fprintf(&b, "variables.%s && size(variables.%s) > 0 ? %s + '\"' + %s + '\"' :\n", it.flag, users, celString(msg), last)
		}
	}
	for _, l := range []struct {
		field string
		kvs   []inject.KeyValue
	}{{"labels", c.in.Template().Labels}, {"annotations", c.in.Template().Annotations}} {
		for _, kv := range l.kvs {
			what := fmt.Sprintf("%s %q (metadata.%s)", strings.TrimSuffix(l.field, "s"), kv.Key, l.field)
			owners := ownersExpr(keyOwnedPattern(l.field, kv.Key))
			fmt.Fprintf(&b, "size(%s) > 0 ? %s :\n", owners, c.profileConflict(what, owners+"[0]"))
		}
	}
	b.WriteString(`""`)
	c.variable("conflict", b.String())
}

// conflictVariables are the variables the validating policy needs to name
// a conflict: the override values, the other profiles' records, the
// presence flags and checks, and the conflict itself (every variable up to
// it).
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
