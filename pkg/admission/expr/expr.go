package expr

import (
	"strconv"
	"strings"
)

// Expr is a CEL expression as a small tree, printed with CEL's operator
// precedence and only the parentheses it needs. The constructors fold
// constants (True && x is x, a conditional on a constant is one branch,
// [] + x is x), so the policy holds no fragment that does nothing.
type Expr interface {
	// prec is the expression's precedence: a child of lower precedence
	// than its parent's operator is parenthesized.
	prec() int
	// write prints the expression on one line.
	write(b *strings.Builder)
}

// Precedence levels, lowest first (the CEL grammar's).
const (
	precCond = iota + 1
	precOr
	precAnd
	precRel
	precAdd
	precUnary
	precMember
	precPrimary
)

// Text is e printed on one line.
func Text(e Expr) string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

// literal is a constant: a string, number, bool or null, as CEL text.
type literal struct {
	text string
	kind byte // 's' string, 'b' bool, 'n' number or null
}

func (l literal) prec() int                { return precPrimary }
func (l literal) write(b *strings.Builder) { b.WriteString(l.text) }

// Str is the string literal s. Go's quoting is valid CEL: both accept
// \a \b \f \n \r \t \v \\ \" \xHH \uHHHH and \UHHHHHHHH.
func Str(s string) Expr { return literal{strconv.Quote(s), 's'} }

// Int is the integer literal n.
func Int(n int64) Expr { return literal{strconv.FormatInt(n, 10), 'n'} }

// Bool is true or false.
func Bool(v bool) Expr { return literal{strconv.FormatBool(v), 'b'} }

// Null is null.
var Null Expr = literal{"null", 'n'}

// True and False are the boolean constants the constructors fold.
var (
	True  = Bool(true)
	False = Bool(false)
)

func isBool(e Expr, v bool) bool {
	l, ok := e.(literal)
	return ok && l.kind == 'b' && l.text == strconv.FormatBool(v)
}

// strValue is the value of a string literal.
func strValue(e Expr) (string, bool) {
	l, ok := e.(literal)
	if !ok || l.kind != 's' {
		return "", false
	}
	s, err := strconv.Unquote(l.text)
	return s, err == nil
}

// ident is a name: object, variables.appContainers, a macro's variable.
type ident string

func (i ident) prec() int                { return precPrimary }
func (i ident) write(b *strings.Builder) { b.WriteString(string(i)) }

// Ident is a name in scope (object, request, a macro variable).
func Ident(name string) Expr { return ident(name) }

// Var is the policy variable name.
func Var(name string) Expr { return ident("variables." + name) }

// Object is the object admitted.
var Object = Ident("object")

// Raw embeds CEL text given whole, already valid (a template's expression,
// say), parenthesized so that it binds as one operand wherever it goes.
func Raw(text string) Expr { return raw(text) }

type raw string

func (r raw) prec() int                { return precPrimary }
func (r raw) write(b *strings.Builder) { b.WriteString("(" + string(r) + ")") }

// member is x.f, x[i], x.f(args) or f(args).
type member struct {
	recv Expr // nil for a global call
	name string
	args []Expr
	kind byte // '.' field, '[' index, '(' call
}

func (m member) prec() int {
	if m.recv == nil {
		return precPrimary
	}
	return precMember
}

func (m member) write(b *strings.Builder) {
	if m.recv != nil {
		writeChild(b, m.recv, precMember)
	}
	switch m.kind {
	case '.':
		b.WriteString("." + m.name)
	case '[':
		b.WriteString("[")
		m.args[0].write(b)
		b.WriteString("]")
	case '?':
		b.WriteString(".?" + m.name)
	case '{':
		b.WriteString("[?")
		m.args[0].write(b)
		b.WriteString("]")
	case '(':
		if m.recv != nil {
			b.WriteString(".")
		}
		b.WriteString(m.name + "(")
		writeList(b, m.args)
		b.WriteString(")")
	}
}

// Field is x.f when f is an identifier, x["f"] otherwise.
func Field(x Expr, f string) Expr {
	if !IsIdent(f) {
		return Index(x, Str(f))
	}
	return member{recv: x, name: f, kind: '.'}
}

// Select is x.f without a check: for the fields of CEL's own types that
// are reserved words elsewhere (request.namespace).
func Select(x Expr, f string) Expr { return member{recv: x, name: f, kind: '.'} }

// OptField is x.?f, an optional of the field (CEL's optional types, on in
// the API server's CEL).
func OptField(x Expr, f string) Expr { return member{recv: x, name: f, kind: '?'} }

// OptIndex is x[?k], an optional of the entry.
func OptIndex(x, k Expr) Expr { return member{recv: x, args: []Expr{k}, kind: '{'} }

// Index is x[i].
func Index(x, i Expr) Expr { return member{recv: x, args: []Expr{i}, kind: '['} }

// Method is x.name(args): a method or a macro (x.exists(c, ...)).
func Method(x Expr, name string, args ...Expr) Expr {
	return member{recv: x, name: name, args: args, kind: '('}
}

// Call is name(args), a global function.
func Call(name string, args ...Expr) Expr { return member{name: name, args: args, kind: '('} }

// Has is has(x.f), whether the field is set; for a key that is not an
// identifier, "f" in x.
func Has(x Expr, f string) Expr {
	if !IsIdent(f) {
		return In(Str(f), x)
	}
	return Call("has", Field(x, f))
}

// binary is a left-associative operator chain: a && b && c, a + b.
type binary struct {
	op       string
	operands []Expr
}

func (o binary) prec() int {
	switch o.op {
	case "||":
		return precOr
	case "&&":
		return precAnd
	case "+", "-":
		return precAdd
	}
	return precRel
}

func (o binary) write(b *strings.Builder) {
	for i, x := range o.operands {
		if i > 0 {
			b.WriteString(" " + o.op + " ")
		}
		p := o.prec()
		if i > 0 || o.op == "==" || o.op == "!=" || o.op == "in" || o.op == ">" || o.op == "<" {
			p++ // relations do not chain; the right operand of - and + binds tighter
		}
		writeChild(b, x, p)
	}
}

// And is the conjunction of xs, with true operands dropped and false
// absorbing.
func And(xs ...Expr) Expr { return logic("&&", true, xs) }

// Or is the disjunction of xs, with false operands dropped and true
// absorbing.
func Or(xs ...Expr) Expr { return logic("||", false, xs) }

func logic(op string, unit bool, xs []Expr) Expr {
	var out []Expr
	for _, x := range xs {
		switch {
		case isBool(x, unit):
			continue
		case isBool(x, !unit):
			return Bool(!unit)
		}
		if o, ok := x.(binary); ok && o.op == op {
			out = append(out, o.operands...)
			continue
		}
		out = append(out, x)
	}
	switch len(out) {
	case 0:
		return Bool(unit)
	case 1:
		return out[0]
	}
	return binary{op, out}
}

// Not is !x, folded on constants and double negation, and pushed through
// ==, !=, && and || (De Morgan's laws, which hold in CEL's logic with
// errors too): !(a == b) is a != b, !(a && b) is !a || !b.
func Not(x Expr) Expr {
	switch {
	case isBool(x, true):
		return False
	case isBool(x, false):
		return True
	}
	switch v := x.(type) {
	case not:
		return v.x
	case binary:
		switch v.op {
		case "==":
			return Ne(v.operands[0], v.operands[1])
		case "!=":
			return Eq(v.operands[0], v.operands[1])
		case "&&", "||":
			negated := make([]Expr, len(v.operands))
			for i, o := range v.operands {
				negated[i] = Not(o)
			}
			if v.op == "&&" {
				return Or(negated...)
			}
			return And(negated...)
		}
	}
	return not{x}
}

type not struct{ x Expr }

func (n not) prec() int { return precUnary }
func (n not) write(b *strings.Builder) {
	b.WriteString("!")
	writeChild(b, n.x, precUnary)
}

// Eq is a == b; Ne is a != b; Gt is a > b; In is a in b.
func Eq(a, b Expr) Expr { return binary{"==", []Expr{a, b}} }
func Ne(a, b Expr) Expr { return binary{"!=", []Expr{a, b}} }
func Gt(a, b Expr) Expr { return binary{">", []Expr{a, b}} }
func In(a, b Expr) Expr { return binary{"in", []Expr{a, b}} }

// Sub is a - b.
func Sub(a, b Expr) Expr { return binary{"-", []Expr{a, b}} }

// Concat is a + b + ...: strings or lists. Empty list and string
// literals are dropped, adjacent string literals and list literals are
// joined.
func Concat(xs ...Expr) Expr {
	var out []Expr
	for _, x := range xs {
		if o, ok := x.(binary); ok && o.op == "+" {
			for _, y := range o.operands {
				out = appendConcat(out, y)
			}
			continue
		}
		out = appendConcat(out, x)
	}
	switch len(out) {
	case 0:
		return Str("")
	case 1:
		return out[0]
	}
	return binary{"+", out}
}

func isEmptyString(e Expr) bool {
	s, ok := strValue(e)
	return ok && s == ""
}

func appendConcat(out []Expr, x Expr) []Expr {
	if s, ok := strValue(x); ok && s == "" {
		return out
	}
	if l, ok := x.(list); ok && len(l) == 0 {
		return out
	}
	if len(out) > 0 {
		last := out[len(out)-1]
		if a, ok := strValue(last); ok {
			if b, ok := strValue(x); ok {
				out[len(out)-1] = Str(a + b)
				return out
			}
		}
		if a, ok := last.(list); ok {
			if b, ok := x.(list); ok {
				out[len(out)-1] = append(append(list{}, a...), b...)
				return out
			}
		}
	}
	return append(out, x)
}

// cond is c ? a : b.
type cond struct{ c, a, b Expr }

func (c cond) prec() int { return precCond }
func (c cond) write(b *strings.Builder) {
	writeChild(b, c.c, precOr)
	b.WriteString(" ? ")
	writeChild(b, c.a, precOr)
	b.WriteString(" : ")
	writeChild(b, c.b, precCond) // right-associative: a chain reads as a list
}

// Cond is c ? a : b, one branch when c is constant or both are the same.
func Cond(c, a, b Expr) Expr {
	switch {
	case isBool(c, true):
		return a
	case isBool(c, false):
		return b
	case Text(a) == Text(b):
		return a
	}
	if n, ok := c.(not); ok {
		return cond{n.x, b, a}
	}
	return cond{c, a, b}
}

// mapLit is a map literal or a typed object (JSONPatch{op: ...}).
type mapLit struct {
	typeName string // "" for a map
	keys     []string
	values   []Expr
}

func (m mapLit) prec() int { return precPrimary }
func (m mapLit) write(b *strings.Builder) {
	b.WriteString(m.typeName + "{")
	for i, k := range m.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		if m.typeName == "" {
			b.WriteString(strconv.Quote(k))
		} else {
			b.WriteString(k)
		}
		b.WriteString(": ")
		m.values[i].write(b)
	}
	b.WriteString("}")
}

// Map is a map literal with string keys, in the order given.
func Map(keys []string, values []Expr) Expr { return mapLit{keys: keys, values: values} }

// JSONPatch is one JSON patch operation "add" of value at path.
func JSONPatch(path, value Expr) Expr {
	return mapLit{typeName: "JSONPatch", keys: []string{"op", "path", "value"}, values: []Expr{Str("add"), path, value}}
}

// Format is the message format (a fmt format whose verbs are all %s, as
// the core exports its messages) with args in place of the verbs.
func Format(format string, args ...Expr) Expr {
	parts := strings.Split(format, "%s")
	if len(parts) != len(args)+1 {
		panic("expr: format " + strconv.Quote(format) + " takes " + strconv.Itoa(len(parts)-1) + " arguments")
	}
	xs := []Expr{Str(parts[0])}
	for i, a := range args {
		xs = append(xs, a, Str(parts[i+1]))
	}
	return Concat(xs...)
}

// Quoted is '"' + x + '"': a DNS name (a container's) as %q writes it.
func Quoted(x Expr) Expr { return Concat(Str(`"`), x, Str(`"`)) }

func writeChild(b *strings.Builder, x Expr, min int) {
	if x.prec() < min {
		b.WriteString("(")
		x.write(b)
		b.WriteString(")")
		return
	}
	x.write(b)
}

func writeList(b *strings.Builder, xs []Expr) {
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		x.write(b)
	}
}

// IsIdent reports whether s can be written as a field selection (x.s)
// rather than an index (x["s"]).
func IsIdent(s string) bool {
	if s == "" || reserved[s] {
		return false
	}
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

var reserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true,
	"void": true, "while": true,
}
