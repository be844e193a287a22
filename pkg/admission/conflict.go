package admission

import (
	"fmt"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// conflict is the variable holding the core's message for a Pod it would
// fail, or "" when the template can be added.
var conflict = expr.Var("conflict")

// check is one case of the conflict chain: when it holds, the message.
type check struct {
	when, message expr.Expr
}

// chain is the first message whose check holds, "" when none does.
func chain(checks []check) expr.Expr {
	return chainOr(checks, expr.Str(""))
}

// chainOr is the first message whose check holds, otherwise.
func chainOr(checks []check, otherwise expr.Expr) expr.Expr {
	out := otherwise
	for i := len(checks) - 1; i >= 0; i-- {
		out = expr.Cond(checks[i].when, checks[i].message, out)
	}
	return out
}

// addConflictVariable declares conflict. The checks run in the core's
// order (another profile's record it cannot read, an override value of
// the wrong type, then containers, init containers, volumes, the added
// sidecars' ports, and the template's labels and annotations), so the
// first problem named is the core's. It returns the reason code of a Pod
// the core refuses before its selection (CEL, read when
// variables.refusal is set): invalid_status or invalid_object.
func (c *compiler) addConflictVariable() (refusedReason expr.Expr) {
	// Records and overrides are annotations: a Pod without any (the
	// most common) reads none of their variables.
	checks := []check{{
		expr.And(expr.Has(metadata, "annotations"), expr.Gt(expr.Call("size", unreadableRecords), expr.Int(0))),
		expr.Concat(expr.Str("metadata.annotations: annotation "), expr.Index(unreadableRecords, expr.Int(0)),
			expr.Str(": not a valid status record (not as kubectl-inject writes it)")),
	}}
	checks = append(checks, c.badValueChecks()...)
	// The core refuses these before it looks at the selection: the
	// policy marks such a Pod even when it would skip it.
	refusal := c.variable(expr.Var("refusal"), "why the core refuses the Pod before its selection (a record it cannot read, a bad override value), or \"\"", chain(checks))
	unreadable := checks[0].when
	refusedReason = expr.Cond(unreadable, expr.Str(string(inject.ReasonInvalidStatus)), expr.Str(string(inject.ReasonInvalidObject)))
	checks = []check{{expr.Ne(refusal, expr.Str("")), refusal}}
	for _, it := range c.items {
		checks = append(checks, c.itemChecks(it)...)
	}
	for _, it := range c.items {
		checks = append(checks, c.portChecks(it)...)
	}
	checks = append(checks, c.computedPortChecks()...)
	for _, k := range inject.MetadataConflictKinds() {
		for _, kv := range k.TemplateKeys(c.in.Template()) {
			what := k.Subject(kv.Key, "metadata."+k.MetadataField())
			owned := c.variable(expr.Var(c.names.unique(camel(kv.Key)+"Owners")), "the other profiles that added or changed "+k.Name+" "+kv.Key,
				owners(keyOwnedPattern(k, kv.Key)))
			checks = append(checks, check{expr.Gt(expr.Call("size", owned), expr.Int(0)), c.profileConflict(expr.Str(what), k.Name, expr.Index(owned, expr.Int(0)))})
		}
	}
	c.variable(conflict, "why the Pod is left as created (the core's message), or \"\" when the sidecar is added", chain(checks))
	return refusedReason
}

// itemChecks are the conflicts of one template item: another profile
// added an item of its name, or the Pod has one of its own that differs.
func (c *compiler) itemChecks(it item) []check {
	stem, kind := it.varName(), it.kind()
	same := c.variable(expr.Var(c.names.unique(stem+"Same")), fmt.Sprintf("the Pod's %s %q holds the template's", kind.Name, it.name), it.identicalExpr())
	owned := c.variable(expr.Var(c.names.unique(stem+"Owners")), fmt.Sprintf("the other profiles that added %s %q", kind.Name, it.name),
		owners(listedPattern(kind.Added, it.name)))
	field := "spec." + it.list
	differs := expr.Format(inject.MessageContainerExists, expr.Str(field), quote(it.name))
	if it.isVolume() {
		// The pod's volume cannot be written as JSON in CEL: the message
		// names the template's only.
		differs = expr.Format(inject.MessageVolumeDiffersTemplateOnly, expr.Str(field), quote(it.name), expr.Str(compactJSON(it.value)))
	}
	// One case, so that a Pod that lacks the item reads one variable.
	isOwned := expr.Gt(expr.Call("size", owned), expr.Int(0))
	return []check{{
		expr.And(expr.Not(it.missing), expr.Or(isOwned, expr.Not(same))),
		expr.Cond(isOwned, c.profileConflict(expr.Str(kind.Subject(it.name, field)), kind.Name, expr.Index(owned, expr.Int(0))), differs),
	}}
}

// portChecks are the conflicts of the ports of an added container: an app
// container uses one (the last of them is named, as the core names it),
// or another profile's sidecar does.
func (c *compiler) portChecks(it item) []check {
	if it.isVolume() {
		return nil
	}
	type sidecarPort struct {
		port     expr.Expr // the number as a string
		proto    string
		reserved string // what binds a reserved port, "" for a declared one
	}
	var list []sidecarPort
	ports, _ := it.value.(map[string]any)["ports"].([]any)
	for _, p := range ports {
		pm, ok := p.(map[string]any)
		if !ok || pm["containerPort"] == nil {
			continue
		}
		port := expr.Str(fmt.Sprint(pm["containerPort"]))
		if h, ok := pm["containerPort"].(hole); ok {
			// A parameter sets it: the port is the value the Pod gives.
			v, err := h.value()
			if err != nil {
				continue
			}
			port = expr.Call("string", v)
		}
		proto, _ := pm["protocol"].(string)
		if proto == "" {
			proto = "TCP"
		}
		list = append(list, sidecarPort{port, proto, ""})
	}
	// Then the ports the template reserves for it, as the core checks them.
	for _, sp := range c.in.Template().SidecarPorts() {
		if sp.Reserved && sp.Container == it.name {
			list = append(list, sidecarPort{expr.Str(strconv.Itoa(sp.Port)), sp.Protocol, sp.What})
		}
	}
	if len(list) == 0 {
		return nil
	}
	rows := make([]expr.Expr, len(list))
	anyReserved, allReserved := false, true
	for i, sp := range list {
		rows[i] = expr.List(sp.port, expr.Str(sp.proto), expr.Str(sp.reserved))
		anyReserved, allReserved = anyReserved || sp.reserved != "", allReserved && sp.reserved != ""
	}
	p, u, x, q, o := expr.Ident("p"), expr.Ident("u"), expr.Ident("x"), expr.Ident("q"), expr.Ident("o")
	at := func(l expr.Expr, i int64) expr.Expr { return expr.Index(l, expr.Int(i)) }
	uses := expr.And(expr.Has(x, "ports"), expr.Method(expr.Field(x, "ports"), "exists", q,
		expr.And(expr.Eq(expr.Field(q, "containerPort"), expr.Call("int", at(p, 0))),
			expr.Eq(expr.Cond(expr.Has(q, "protocol"), expr.Field(q, "protocol"), expr.Str("TCP")), at(p, 1)))))
	// One comprehension (map with a filter), reversed: the core names the
	// last container.
	last := expr.Index(expr.Concat(expr.Method(expr.Method(expr.Var("allContainers"), "map", x, uses, expr.Field(x, "name")), "reverse"),
		expr.List(expr.Str(""))), expr.Int(0))
	owned := expr.Method(expr.Method(otherRecords, "filter", o, listsName(at(o, 2), at(u, 3))), "map", o, at(o, 0))
	users := c.variable(expr.Var(c.names.unique(it.varName()+"PortUsers")),
		fmt.Sprintf("the ports of %q the Pod uses: [port, protocol, what binds it (\"\" if declared), last user, profiles that added it]", it.name),
		expr.Method(expr.Method(expr.Method(expr.List(rows...), "map", p, expr.Concat(p, expr.List(last))),
			"filter", u, expr.Ne(at(u, 3), expr.Str(""))), "map", u, expr.Concat(u, owned)))
	user := expr.Quoted(at(u, 3))
	appUses := expr.Format(inject.MessagePortUsed, expr.Str("spec.containers"), quote(it.name), at(u, 0), user)
	reserved := expr.Format(inject.MessagePortReserved, expr.Str("spec.containers"), quote(it.name), at(u, 0), at(u, 2), user)
	switch {
	case allReserved:
		appUses = reserved
	case anyReserved:
		appUses = expr.Cond(expr.Eq(at(u, 2), expr.Str("")), appUses, reserved)
	}
	what := expr.Format(inject.MessagePortOwned, expr.Concat(at(u, 0), expr.Str("/"), at(u, 1)), expr.Str("spec.containers"), user, quote(it.name))
	msg := expr.Cond(expr.Gt(expr.Call("size", u), expr.Int(4)), c.profileConflict(what, inject.ConflictPort.Name, at(u, 4)), appUses)
	return []check{{expr.And(it.missing, expr.Gt(expr.Call("size", users), expr.Int(0))), firstOf(users, u, msg)}}
}

// computedPortChecks refuse an app port an expression computed from the
// Pod that is one of the sidecars' ports, as the core does after the
// port conflicts.
func (c *compiler) computedPortChecks() []check {
	var out []check
	s := expr.Ident("s")
	for _, p := range c.params {
		taken := c.portTaken(p)
		if taken == nil || p.computed == nil {
			continue
		}
		computed := expr.And(expr.Not(p.ann), expr.Ne(p.computed, expr.Null))
		msg := expr.Format(inject.MessageComputedPort, expr.Str(p.Annotation), expr.Index(s, expr.Int(0)),
			expr.Quoted(expr.Index(s, expr.Int(1))), expr.Index(s, expr.Int(2)))
		out = append(out, check{expr.And(computed, expr.Gt(expr.Call("size", taken), expr.Int(0))), firstOf(taken, s, msg)})
	}
	return out
}

// compactJSON is the template's item v as the core's messages write it.
func compactJSON(v any) string { return inject.CompactJSON(stripHoles(v)) }

// stripHoles is v with each parameter's hole replaced by the template's
// value.
func stripHoles(v any) any {
	switch x := v.(type) {
	case hole:
		return x.orig
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = stripHoles(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripHoles(e)
		}
		return out
	}
	return v
}
