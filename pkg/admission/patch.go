package admission

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// patchExpression is the mutation: the JSON patches that add what the
// core adds, in the core's places, or none at all when the Pod has a
// conflict (the Pod is then left as created; the validating policy says
// why).
func (c *compiler) patchExpression() expr.Expr {
	parts := []expr.Expr{
		// Classic sidecars go after the app's containers.
		c.addedEach("containers", func(it item) expr.Expr { return expr.JSONPatch(expr.Str("/spec/containers/-"), it.lit) }),
		c.initContainerPatches(),
		// Volumes go after the app's volumes, or make the list.
		c.listPatches("volumes", func(it item) expr.Expr { return expr.JSONPatch(expr.Str("/spec/volumes/-"), it.lit) }),
	}
	if labels := c.labelEntries(); len(labels) > 0 {
		parts = append(parts, mapPatches("/metadata/labels", "labels", labels))
	}
	entries := append(c.annotationEntries(), entry{key: c.in.StatusAnnotation(), value: status, always: true})
	parts = append(parts, entryPatches("/metadata/annotations", "annotations", entries))
	// A Pod left alone says why (variables.skipped); one of a namespace in
	// opt-in mode that did not opt in is left as it is. Both a Pod that
	// gets the sidecar and one that is marked get an annotation: the map
	// is made first where the Pod has none.
	skipped := expr.Var("skipped")
	mark := entryPatches("/metadata/annotations", "annotations", []entry{{key: naming.SkippedAnnotationFor(c.profile), value: skipped, always: true}})
	return expr.Cond(expr.Eq(skipped, expr.Str(string(inject.ReasonNotOptedIn))), expr.List(),
		expr.Concat(mapInit("/metadata/annotations", "annotations"), expr.Cond(expr.Eq(skipped, expr.Str("")), expr.Lists(parts...), mark)))
}

// addSkipVariable declares skipped: the core's reason code for a Pod it
// leaves alone, in the core's order (a record or an override value it
// refuses, the first condition the Pod fails, a conflict), or "" for a
// Pod that gets the sidecar.
//
// A refusal and a conflict also carry the core's message after the code
// ("conflict: spec.containers: ..."): the validating policy reads it from
// the Pod instead of deriving it again. The message is cut to
// MarkMessageLimit characters, so that a long override value echoed in it
// cannot take the Pod's annotations past the API server's limit.
func (c *compiler) addSkipVariable(conds []matchCondition, refusedReason expr.Expr) {
	why := c.variable(expr.Var("why"), fmt.Sprintf("the core's message, cut to %d characters", MarkMessageLimit),
		expr.Cond(expr.Gt(expr.Call("size", conflict), expr.Int(MarkMessageLimit)),
			expr.Concat(expr.Method(conflict, "substring", expr.Int(0), expr.Int(MarkMessageLimit)), expr.Str("...")), conflict))
	checks := []check{{expr.Ne(expr.Var("refusal"), expr.Str("")), expr.Concat(refusedReason, expr.Str(": "), why)}}
	for _, mc := range conds {
		checks = append(checks, check{expr.Not(mc.cond), expr.Str(string(mc.reason))})
	}
	if completes, ok := c.completionCheck(); ok {
		checks = append(checks, completes)
	}
	checks = append(checks, check{expr.Ne(conflict, expr.Str("")), expr.Concat(expr.Str(string(inject.ReasonConflict)+": "), why)})
	c.variable(expr.Var("skipped"), "why the core leaves the Pod alone (its reason code, and its message for a refusal or a conflict), or \"\"", chain(checks))
}

// MarkMessageLimit is the most characters of the core's message a skip
// mark carries; a longer one is cut there and ends in "...".
const MarkMessageLimit = 1024

// addedEach is the list of f(item) for the items of list that are added.
func (c *compiler) addedEach(list string, f func(item) expr.Expr) expr.Expr {
	var parts []expr.Expr
	for _, it := range c.itemsOf(list) {
		parts = append(parts, expr.When(it.missing, expr.List(f(it))))
	}
	return expr.Lists(parts...)
}

// listPatches adds the template's items of list after the Pod's, or makes
// the list (variables.newVolumes) when the Pod has none.
func (c *compiler) listPatches(list string, each func(item) expr.Expr) expr.Expr {
	if len(c.itemsOf(list)) == 0 {
		return expr.List()
	}
	added := expr.Var(newListVar(list))
	create := expr.When(expr.Gt(expr.Call("size", added), expr.Int(0)), expr.List(expr.JSONPatch(expr.Str("/spec/"+list), added)))
	return expr.Cond(expr.Not(expr.Has(spec, list)), create, c.addedEach(list, each))
}

// newListVar names the variable of the items of list that are added.
func newListVar(list string) string {
	if list == "volumes" {
		return "newVolumes"
	}
	return "newInitContainers"
}

// initContainerPatches puts native sidecars (and any other init containers
// of the template) before the app's own init containers, after the other
// profiles' (the core's order: sidecars start in the order they were
// injected), in template order, or makes the list.
func (c *compiler) initContainerPatches() expr.Expr {
	items := c.itemsOf("initContainers")
	if len(items) == 0 {
		return c.listPatches("initContainers", nil)
	}
	ahead := c.sidecarsAhead()
	return c.listPatches("initContainers", func(it item) expr.Expr {
		// Its index: the other profiles' sidecars ahead, and the template
		// items added before it.
		var before []expr.Expr
		for _, b := range items {
			if b.name == it.name {
				break
			}
			before = append(before, b.missing)
		}
		index := ahead
		if len(before) > 0 {
			b := expr.Ident("b")
			index = expr.Concat(ahead, expr.Method(expr.Method(expr.List(before...), "filter", b, b), "size"))
		}
		return expr.JSONPatch(expr.Concat(expr.Str("/spec/initContainers/"), expr.Call("string", index)), it.lit)
	})
}

// sidecarsAhead declares the number of init containers at the front of the
// Pod's list that other profiles' records list (the whole list when all
// are), where the core puts the template's: after them.
func (c *compiler) sidecarsAhead() expr.Expr {
	c.addOtherSidecars()
	x, n := expr.Ident("x"), expr.Ident("n")
	// The names end in "", which no container has: the index of the first
	// name no other profile lists, or of "" when every one is listed.
	names := expr.Method(expr.Field(spec, "initContainers"), "map", x, expr.Field(x, "name"))
	first := expr.Index(expr.Concat(expr.Method(names, "filter", n, expr.Not(listsName(otherSidecars, n))), expr.List(expr.Str(""))), expr.Int(0))
	return c.variable(expr.Var("sidecarsAhead"), "how many of the Pod's init containers, at the front, other profiles added: the template's go after them",
		expr.Cond(expr.Has(spec, "initContainers"), expr.Method(expr.Concat(names, expr.List(expr.Str(""))), "indexOf", first), expr.Int(0)))
}

// mapPatches sets entries of the labels or annotations map (field of
// metadata) at path, making the map first when the Pod has none. An entry
// whose value is already there is not patched.
func mapPatches(path, field string, entries []entry) expr.Expr {
	return expr.Concat(mapInit(path, field), entryPatches(path, field, entries))
}

// mapInit makes the map at path (metadata.field) where the Pod has none.
func mapInit(path, field string) expr.Expr {
	return expr.When(expr.Not(expr.Has(metadata, field)), expr.List(expr.JSONPatch(expr.Str(path), expr.Map(nil, nil))))
}

// entryPatches are mapPatches' entries, the map being there.
func entryPatches(path, field string, entries []entry) expr.Expr {
	m := expr.Field(metadata, field)
	var parts []expr.Expr
	for _, e := range entries {
		when := expr.True
		switch {
		case e.differs:
			when = e.whenOrTrue()
		case !e.always:
			k := expr.Str(e.key)
			when = expr.And(e.whenOrTrue(), expr.Or(expr.Not(expr.Has(metadata, field)), expr.Not(expr.In(k, m)), expr.Ne(expr.Index(m, k), e.value)))
		}
		parts = append(parts, expr.When(when, expr.List(expr.JSONPatch(expr.Str(path+"/"+jsonPointerKey(e.key)), e.value))))
	}
	return expr.Concat(parts...)
}
