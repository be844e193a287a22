package admission

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// entry is one label or annotation the policy sets: a key, its value, and
// when it applies (nil: always, unless the value is already there).
type entry struct {
	key    string
	value  expr.Expr
	when   expr.Expr
	always bool // the status record: written whatever is there
	// differs: when holds only where the Pod's value, if any, is "" and
	// value is not (the default container: set where the Pod's is unset
	// or ""), so it is written without comparing, and the record keeps ""
	// as the value it overwrote.
	differs bool
}

func (e entry) whenOrTrue() expr.Expr {
	if e.when == nil {
		return expr.True
	}
	return e.when
}

// Variables of the record.
var (
	status                 = expr.Var("status")
	firstApp               = expr.Var("firstAppContainer")
	setsDefaultContainer   = expr.Var("setsDefaultContainer")
	claimsDefaultContainer = expr.Var("claimsDefaultContainer")
)

// labelEntries are the template's labels.
func (c *compiler) labelEntries() []entry {
	var out []entry
	for _, kv := range c.in.Template().Labels {
		out = append(out, entry{key: kv.Key, value: expr.Str(kv.Value)})
	}
	return out
}

// annotationEntries are the default-container annotation, first, when a
// classic sidecar is added to a Pod that names no default container (the
// app's first container that no profile added), and the template's
// annotations. The core puts the default container first so that it sits
// where any profile would put it.
func (c *compiler) annotationEntries() []entry {
	var out []entry
	if c.addsDefaultContainer() {
		out = append(out, entry{key: naming.DefaultContainerAnnotation, value: firstApp, when: setsDefaultContainer, differs: true})
	}
	for _, kv := range c.in.Template().Annotations {
		out = append(out, entry{key: kv.Key, value: expr.Str(kv.Value)})
	}
	return out
}

// addsDefaultContainer reports whether the template adds classic
// containers and leaves the default-container annotation to the core.
func (c *compiler) addsDefaultContainer() bool {
	for _, kv := range c.in.Template().Annotations {
		if kv.Key == naming.DefaultContainerAnnotation {
			return false
		}
	}
	return len(c.itemsOf("containers")) > 0
}

// anyMissing is true when any of the template's items of list is added.
func (c *compiler) anyMissing(lists ...string) expr.Expr {
	var out []expr.Expr
	for _, l := range lists {
		for _, it := range c.itemsOf(l) {
			out = append(out, it.missing)
		}
	}
	return expr.Or(out...)
}

// addDefaultContainerVariables declares firstAppContainer (the Pod's first
// container that no other profile's record lists), setsDefaultContainer
// (the policy writes the annotation) and claimsDefaultContainer (the Pod
// names a default container that another profile added: this profile
// records it as added too, so it stays until the last of them is removed).
func (c *compiler) addDefaultContainerVariables() {
	if !c.addsDefaultContainer() {
		return
	}
	c.addOtherSidecars()
	key := expr.Str(naming.DefaultContainerAnnotation)
	named := expr.And(expr.Has(metadata, "annotations"), expr.In(key, annotations), expr.Ne(expr.Index(annotations, key), expr.Str("")))
	x, n := expr.Ident("x"), expr.Ident("n")
	apps := expr.Method(expr.Method(expr.Field(spec, "containers"), "map", x, expr.Field(x, "name")), "filter", n,
		expr.And(expr.Ne(n, expr.Str("")), expr.Not(listsName(otherSidecars, n))))
	// Without annotations the Pod has no other profile's record.
	named1 := expr.Method(expr.Field(spec, "containers"), "map", x, expr.Ne(expr.Field(x, "name"), expr.Str("")), expr.Field(x, "name"))
	c.variable(firstApp, "the Pod's first container that no profile added", expr.Index(expr.Concat(
		expr.Cond(expr.Has(metadata, "annotations"), apps, named1), expr.List(expr.Str(""))), expr.Int(0)))
	added := c.anyMissing("containers")
	c.variable(setsDefaultContainer, "the policy names the app's container as the default one",
		expr.And(added, expr.Not(named), expr.Ne(firstApp, expr.Str(""))))
	c.variable(claimsDefaultContainer, "another profile named the default container: this one records it too",
		expr.And(added, named, expr.Gt(expr.Call("size", owners(keyOwnedPattern(inject.ConflictAnnotation, naming.DefaultContainerAnnotation))), expr.Int(0))))
}

// addItemVariables declares the template's items with overrides applied:
// what the mutation adds, and what a Pod's item of the same name is
// compared with.
func (c *compiler) addItemVariables() {
	for i := range c.items {
		it := &c.items[i]
		name := it.varName()
		if !it.isVolume() {
			name += "Container"
		}
		kind := map[string]string{"containers": "container", "initContainers": "init container", "volumes": "volume"}[it.list]
		it.lit = c.variable(expr.Var(c.names.unique(name)), fmt.Sprintf("the template's %s %q, overrides applied", kind, it.name), it.lit)
	}
}

// addStatusVariables declares the parts of the status record and the
// record itself, field for field what record.Status.Encode writes.
func (c *compiler) addStatusVariables() {
	for _, l := range []string{"initContainers", "volumes"} {
		if len(c.itemsOf(l)) > 0 {
			c.variable(expr.Var(newListVar(l)), "the template's "+l+" the Pod lacks", c.addedEach(l, func(it item) expr.Expr { return it.lit }))
		}
	}
	c.addDefaultContainerVariables()
	for _, m := range []struct {
		name, field string
		entries     []entry
	}{
		{"Labels", "labels", c.labelEntries()},
		{"Annotations", "annotations", c.annotationEntries()},
	} {
		if len(m.entries) == 0 {
			continue
		}
		mp := expr.Field(metadata, m.field)
		var added, changed []expr.Expr
		if m.name == "Annotations" && c.addsDefaultContainer() {
			added = append(added, expr.When(claimsDefaultContainer, expr.List(expr.Str(jsonString(naming.DefaultContainerAnnotation)))))
		}
		byKey := map[string]entry{}
		for _, e := range m.entries {
			k := expr.Str(e.key)
			absent := expr.Or(expr.Not(expr.Has(metadata, m.field)), expr.Not(expr.In(k, mp)))
			added = append(added, expr.When(expr.And(e.whenOrTrue(), absent), expr.List(expr.Str(jsonString(e.key)))))
			byKey[e.key] = e
		}
		for _, k := range slices.Sorted(maps.Keys(byKey)) { // encoding/json sorts map keys
			e := byKey[k]
			old := expr.Index(mp, expr.Str(k))
			overwrites := expr.And(e.whenOrTrue(), expr.Has(metadata, m.field), expr.In(expr.Str(k), mp))
			pair := expr.Str(jsonString(k) + `:""`)
			if !e.differs {
				overwrites = expr.And(overwrites, expr.Ne(old, e.value))
				pair = expr.Concat(expr.Str(jsonString(k)+`:"`), c.jsonEscaped(old), expr.Str(`"`))
			}
			changed = append(changed, expr.When(overwrites, expr.List(pair)))
		}
		c.variable(expr.Var("added"+m.name), "the template's "+m.field+" the Pod lacks, as JSON strings", expr.Lists(added...))
		c.variable(expr.Var("changed"+m.name), "the Pod's "+m.field+" the template overwrites, with their old values", expr.Lists(changed...))
	}
	c.addFieldVariables()
	c.variable(status, "the status record, as kubectl-inject writes it", c.statusExpr())
}

// fieldChange says, for one field a record may list as created, null or
// empty, when this profile creates it and when it adds to it where it
// exists (nil for never).
type fieldChange struct {
	field           string
	creates, addsTo expr.Expr
}

// fieldChanges are the record's fields in the core's (sorted) order. A
// Pod always has containers and metadata; empty lists and maps reach
// admission as absent fields, so this profile never records a field as
// null or empty itself: only another profile's record can say it was.
func (c *compiler) fieldChanges() []fieldChange {
	hasNew := func(l string) expr.Expr {
		if len(c.itemsOf(l)) == 0 {
			return nil
		}
		return expr.Gt(expr.Call("size", expr.Var(newListVar(l))), expr.Int(0))
	}
	createsList := func(l string) fieldChange {
		n := hasNew(l)
		if n == nil {
			return fieldChange{field: l}
		}
		return fieldChange{l, expr.And(expr.Not(expr.Has(spec, l)), n), expr.And(expr.Has(spec, l), n)}
	}
	out := []fieldChange{
		{field: "containers", addsTo: c.anyMissing("containers")},
		createsList("initContainers"),
		{field: "metadata", addsTo: expr.True},
		{"metadata.annotations", expr.Not(expr.Has(metadata, "annotations")), expr.Has(metadata, "annotations")},
		{field: "metadata.labels"},
		{field: "spec", addsTo: c.anyMissing("containers", "initContainers", "volumes")},
		createsList("volumes"),
	}
	if len(c.in.Template().Labels) > 0 {
		out[4] = fieldChange{"metadata.labels", expr.Not(expr.Has(metadata, "labels")), expr.Has(metadata, "labels")}
	}
	return out
}

// addFieldVariables declares inherited, created, nulled, nullTokens and
// emptyText: the record's lists of fields this profile created, or that
// another profile's record lists as created, null or empty and this
// profile adds to (inject's others.inherit), so that every profile's
// record is the same whatever the order of injection. One table,
// inherited, holds what the other records say of each field this
// profile adds to; the lists are read from it, in the core's order.
func (c *compiler) addFieldVariables() {
	f, i := expr.Ident("f"), expr.Ident("i")
	var addsTo, own, candidates []expr.Expr
	for _, ch := range c.fieldChanges() {
		adds := ch.addsTo != nil && !isFalse(ch.addsTo)
		if adds {
			addsTo = append(addsTo, expr.When(ch.addsTo, expr.List(expr.Str(ch.field))))
		}
		if ch.field == "spec" {
			continue // never created: a Pod always has one
		}
		if ch.creates != nil {
			own = append(own, expr.And(expr.Eq(f, expr.Str(ch.field)), ch.creates))
		}
		if ch.creates != nil || adds {
			candidates = append(candidates, expr.Str(ch.field))
		}
	}
	inherited := c.variable(expr.Var("inherited"),
		"what other profiles' records say of each field this one adds to: [field, \"c\" created, \"n\" null or \"e\" empty then text]",
		expr.Method(expr.Lists(addsTo...), "map", f, expr.List(f, inheritance(f))))
	first, rest := expr.Index(i, expr.Int(0)), expr.Index(i, expr.Int(1))
	is := func(kind string) expr.Expr { return expr.Method(rest, "startsWith", expr.Str(kind)) }
	pair := expr.Concat(expr.Quoted(first), expr.Str(`:"`), expr.Method(rest, "substring", expr.Int(1)), expr.Str(`"`))
	createdHere := append(own, expr.In(expr.List(f, expr.Str("c")), inherited))
	c.variable(expr.Var("created"), "the fields the record lists as created",
		expr.Method(expr.Method(expr.List(candidates...), "filter", f, expr.Or(createdHere...)), "map", f, expr.Quoted(f)))
	c.variable(expr.Var("nulled"), "the fields it lists as null",
		expr.Method(expr.Method(inherited, "filter", i, is("n")), "map", i, expr.Quoted(first)))
	c.variable(expr.Var("nullTokens"), "how they were written",
		expr.Method(expr.Method(inherited, "filter", i, expr.And(is("n"), expr.Gt(expr.Method(rest, "size"), expr.Int(1)))), "map", i, pair))
	c.variable(expr.Var("emptyText"), "the blank text of fields that were empty collections",
		expr.Method(expr.Method(inherited, "filter", i, is("e")), "map", i, pair))
}

func isFalse(e expr.Expr) bool { return expr.Text(e) == "false" }

// jsonListField is `,"name":[` + items.join(",") + `]`, or "" for no
// items (a list expression of JSON texts).
func jsonListField(name string, items expr.Expr) expr.Expr {
	return jsonField(name, items, "[", "]")
}

// jsonObjectField is `,"name":{` + pairs.join(",") + `}`, or "".
func jsonObjectField(name string, pairs expr.Expr) expr.Expr {
	return jsonField(name, pairs, "{", "}")
}

func jsonField(name string, parts expr.Expr, open, close string) expr.Expr {
	return expr.Joined(parts, ",", fmt.Sprintf(`,%s:%s`, jsonString(name), open), close)
}

// inheritedFields are the record's created, null, nullTokens and empty
// fields. Only another profile's record can make them more than the
// fields this profile creates, so a Pod without annotations (the most
// common) reads none of the variables that look at records.
func (c *compiler) inheritedFields() expr.Expr {
	var own []expr.Expr
	for _, f := range c.fieldChanges() {
		if f.creates != nil && f.field != "spec" {
			own = append(own, expr.When(f.creates, expr.List(expr.Str(jsonString(f.field)))))
		}
	}
	withOthers := expr.Concat(
		jsonListField("created", expr.Var("created")),
		jsonListField("null", expr.Var("nulled")),
		jsonObjectField("nullTokens", expr.Var("nullTokens")),
		jsonObjectField("empty", expr.Var("emptyText")),
	)
	others := expr.And(expr.Has(metadata, "annotations"), expr.Gt(expr.Call("size", otherRecords), expr.Int(0)))
	return expr.Cond(others, withOthers, jsonListField("created", expr.Lists(own...)))
}

// statusExpr renders the record as record.Status.Encode does: fields in
// struct order, empty ones left out.
func (c *compiler) statusExpr() expr.Expr {
	names := func(list string) expr.Expr {
		return c.addedEach(list, func(it item) expr.Expr { return expr.Str(jsonString(it.name)) })
	}
	mapPart := func(name string, v expr.Expr) expr.Expr {
		if expr.Text(v) == "[]" {
			return expr.List()
		}
		return expr.When(expr.Gt(expr.Call("size", v), expr.Int(0)),
			expr.List(expr.Concat(expr.Str(jsonString(name)+":{"), expr.Method(v, "join", expr.Str(",")), expr.Str("}"))))
	}
	varOr := func(name string, has bool) expr.Expr {
		if !has {
			return expr.List()
		}
		return expr.Var(name)
	}
	hasLabels, hasAnnotations := len(c.labelEntries()) > 0, len(c.annotationEntries()) > 0
	changed := expr.Lists(mapPart("labels", varOr("changedLabels", hasLabels)), mapPart("annotations", varOr("changedAnnotations", hasAnnotations)))
	return expr.Concat(
		expr.Str(fmt.Sprintf(`{"v":1,"template":%s`, jsonString(c.in.TemplateHash()))),
		jsonListField("containers", names("containers")),
		jsonListField("initContainers", names("initContainers")),
		jsonListField("volumes", names("volumes")),
		jsonListField("labels", varOr("addedLabels", hasLabels)),
		jsonListField("annotations", varOr("addedAnnotations", hasAnnotations)),
		jsonObjectField("changed", changed),
		c.inheritedFields(),
		c.valuesField(),
		expr.Str("}"),
	)
}
