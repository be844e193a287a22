package admission

import (
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// Other profiles' records on the Pod (injected at build time, or by another
// profile's policy earlier in the admission chain) are read as the core
// reads them: what they list cannot be taken, fields they created are
// created for this profile too, and the default-container annotation is
// shared. CEL has no JSON parser, so the records are matched as the compact
// JSON record.Status.Encode writes, whose field order is fixed (record.go).

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
		expr.Method(otherKeys, "filter", k, expr.Not(expr.Method(record, "matches", expr.Str(recordPattern())))))
	// Each key and its record, read once: [key, record].
	e := expr.Ident("e")
	pairs := expr.Method(otherKeys, "map", k, expr.List(expr.Call("string", k), record))
	key := expr.Index(e, expr.Int(0))
	record = expr.Index(e, expr.Int(1))
	// A section of the record (a list or map field), found once each: the
	// sidecar lists, and what inheritance reads.
	section := func(field, pattern string) expr.Expr {
		return expr.Method(record, "find", expr.Str(`,"`+field+`":`+pattern))
	}
	// naming.ProfileName of the record's profile.
	display := expr.Cond(expr.Eq(key, expr.Str(naming.StatusAnnotation)), expr.Str(naming.ProfileName("")),
		expr.Concat(expr.Str(`profile "`), expr.Method(key, "substring", expr.Int(0), expr.Sub(expr.Method(key, "size"), expr.Int(int64(len(statusSuffix))))), expr.Str(`"`)))
	c.variable(otherRecords, "for each: [its profile as messages name it, its text, containers and initContainers, "+
		"created, null, empty, nullTokens]",
		expr.Method(pairs, "map", e, expr.List(display, record, expr.Concat(section("containers", reList), section("initContainers", reList)),
			section("created", `\[[^\]]*\]`), section("null", `\[[^\]]*\]`),
			section("empty", `\{[^}]*\}`), section("nullTokens", `\{[^}]*\}`))))
}

// addOtherSidecars declares the containers other profiles added.
func (c *compiler) addOtherSidecars() {
	if c.declares("otherSidecars") {
		return
	}
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
	return expr.Format(inject.MessageProfileConflict, what, owner, expr.Str(naming.ProfileName(c.profile)), expr.Str(kind))
}

// inheritance is a string expression telling how the first other record
// that lists the field named f (a string expression: a macro's variable)
// in empty, created or null did so (inject's others.inherit): "e"
// followed by the blank text it recorded, "c" (created), "n" (it was
// null) followed by the null token it recorded, or "" when none does.
// Each list or map section of a record is found once (otherRecords), then
// the field's quoted name in it (contains): the patterns stay constants.
// The names are the record's own field names, which hold no character
// JSON escapes; a '.' in one is a wildcard where a name is a pattern, but
// the record pattern (unreadableRecords) admits no other name it could
// match.
func inheritance(f expr.Expr) expr.Expr {
	o := expr.Ident("o")
	name := expr.Quoted(f)
	created, null, empty, tokens := expr.Index(o, expr.Int(3)), expr.Index(o, expr.Int(4)), expr.Index(o, expr.Int(5)), expr.Index(o, expr.Int(6))
	inEmpty := expr.Method(empty, "contains", expr.Concat(name, expr.Str(":")))
	// The value recorded for the field in a map section (nullTokens,
	// empty), as JSON text without its quotes: the pair "field":"value"
	// found, its key and quotes taken away ("" when none is found). The
	// value holds no quote, so the only ones left after the key are its
	// own.
	recorded := func(section expr.Expr) expr.Expr {
		pair := expr.Method(section, "find", expr.Concat(name, expr.Str(`:"[^"]*"`)))
		return expr.Method(expr.Method(pair, "replace", expr.Concat(name, expr.Str(`:"`)), expr.Str("")), "replace", expr.Str(`"`), expr.Str(""))
	}
	inCreated := expr.Method(created, "contains", name)
	how := expr.Cond(inEmpty, expr.Concat(expr.Str("e"), recorded(empty)),
		expr.Cond(inCreated, expr.Str("c"), expr.Concat(expr.Str("n"), recorded(tokens))))
	list := expr.Method(expr.Method(otherRecords, "filter", o, expr.Or(inCreated, expr.Method(null, "contains", name), inEmpty)), "map", o, how)
	return expr.Index(expr.Concat(list, expr.List(expr.Str(""))), expr.Int(0))
}

// quote is s quoted as %q quotes it.
func quote(s string) expr.Expr { return expr.Str(strconv.Quote(s)) }
