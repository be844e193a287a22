package admission

import (
	"regexp"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Other profiles' records on the Pod (injected at build time, or by another
// profile's policy earlier in the admission chain) are read as the core
// reads them: what they list cannot be taken, fields they created are
// created for this profile too, and the default-container annotation is
// shared. CEL has no JSON parser, so the records are matched as the compact
// JSON inject.Status.Encode writes, whose field order is fixed (record.go).

// Variables of the other profiles' records.
var (
	otherKeys         = expr.Var("otherStatusKeys")
	unreadableRecords = expr.Var("unreadableRecords")
	otherRecords      = expr.Var("otherRecords")
	otherSidecars     = expr.Var("otherSidecars")
)

// addOtherVariables declares the other profiles' records.
func (c *compiler) addOtherVariables() {
	k := expr.Ident("k")
	own := expr.Str(c.in.StatusAnnotation())
	c.variable(otherKeys, "the annotations holding other profiles' status records",
		expr.Cond(expr.Has(metadata, "annotations"),
			expr.Method(annotations, "filter", k, expr.And(expr.Ne(k, own), expr.Method(k, "matches", expr.Str(statusKeyPattern)))),
			expr.List()))
	record := expr.Call("string", expr.Index(annotations, k))
	c.variable(unreadableRecords, "those not written as kubectl-inject writes them",
		expr.Method(otherKeys, "filter", k, expr.Not(expr.Method(record, "matches", expr.Str(recordPattern)))))
	lists := func(field string) expr.Expr {
		return expr.Method(record, "find", expr.Str(`,"`+field+`":`+reList))
	}
	// inject.ProfileName of the record's profile.
	key := expr.Call("string", k)
	display := expr.Cond(expr.Eq(key, expr.Str(inject.StatusAnnotation)), expr.Str(inject.ProfileName("")),
		expr.Concat(expr.Str(`profile "`), expr.Method(key, "substring", expr.Int(0), expr.Sub(expr.Method(key, "size"), expr.Int(int64(len(statusSuffix))))), expr.Str(`"`)))
	c.variable(otherRecords, "for each: [the profile as messages name it, the record, its containers and initContainers lists as JSON]",
		expr.Method(otherKeys, "map", k, expr.List(display, record, expr.Concat(lists("containers"), lists("initContainers")))))
}

// addOtherSidecars declares the containers other profiles added.
func (c *compiler) addOtherSidecars() {
	o := expr.Ident("o")
	c.variable(otherSidecars, "the containers the other profiles added, as JSON lists",
		expr.Method(expr.Method(otherRecords, "map", o, expr.Index(o, expr.Int(2))), "join", expr.Str("")))
}

// owners lists the profiles (as named in messages) whose records match
// the regular expression re.
func owners(re string) expr.Expr {
	o := expr.Ident("o")
	return expr.Method(expr.Method(otherRecords, "filter", o, expr.Method(expr.Index(o, expr.Int(1)), "matches", expr.Str(re))), "map", o, expr.Index(o, expr.Int(0)))
}

// listsName is true when the JSON lists text holds name (a string
// expression), a Pod's container name.
func listsName(text, name expr.Expr) expr.Expr {
	return expr.Or(
		expr.Method(text, "contains", expr.Concat(expr.Str(`"`), name, expr.Str(`",`))),
		expr.Method(text, "contains", expr.Concat(expr.Str(`"`), name, expr.Str(`"]`))))
}

// profileConflict is the core's message when another profile (owner, a
// string expression) owns what this one would add (what, its kind first).
func (c *compiler) profileConflict(what expr.Expr, kind string, owner expr.Expr) expr.Expr {
	return expr.Format(inject.MessageProfileConflict, what, owner, expr.Str(inject.ProfileName(c.profile)), expr.Str(kind))
}

// inheritance is a string expression telling how the first other record
// that lists field in empty, created or null did so (inject's
// others.inherit): "e" followed by the blank text it recorded, "c"
// (created), "n" (it was null) followed by the null token it recorded, or
// "" when none does.
func inheritance(field string) expr.Expr {
	f := regexp.QuoteMeta(jsonString(field))
	r := expr.Ident("r")
	// The value recorded for field in a map field (nullTokens, empty) of r,
	// as JSON text without its quotes: the pair "field":"value" found, its
	// key and quotes taken away ("" when none is found). The value holds
	// no quote, so the only ones left after the key are its own.
	recorded := func(mapField string) expr.Expr {
		pair := expr.Method(expr.Method(r, "find", expr.Str(`,"`+mapField+`":\{[^}]*\}`)), "find", expr.Str(f+`:"[^"]*"`))
		return expr.Method(expr.Method(pair, "replace", expr.Str(jsonString(field)+`:"`), expr.Str("")), "replace", expr.Str(`"`), expr.Str(""))
	}
	how := expr.Cond(expr.Method(r, "matches", expr.Str(`,"empty":\{[^}]*`+f+`:`)), expr.Concat(expr.Str("e"), recorded("empty")),
		expr.Cond(expr.Method(r, "matches", expr.Str(`,"created":\[[^\]]*`+f)), expr.Str("c"),
			expr.Concat(expr.Str("n"), recorded("nullTokens"))))
	o := expr.Ident("o")
	list := expr.Method(expr.Method(expr.Method(otherRecords, "map", o, expr.Index(o, expr.Int(1))), "filter", r,
		expr.Method(r, "matches", expr.Str(`,"(?:created|null)":\[[^\]]*`+f+`|,"empty":\{[^}]*`+f+`:`))), "map", r, how)
	return expr.Index(expr.Concat(list, expr.List(expr.Str(""))), expr.Int(0))
}

// quote is s quoted as %q quotes it.
func quote(s string) expr.Expr { return expr.Str(strconv.Quote(s)) }
