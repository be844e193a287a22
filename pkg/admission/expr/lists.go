package expr

import "strings"

// Lists: list literals, conditional lists, their concatenation and the
// JSON text joined from them.

// Lists is Concat of list expressions: [] when there are none.
func Lists(xs ...Expr) Expr {
	if e := Concat(xs...); !isEmptyString(e) {
		return e
	}
	return List()
}

// Joined is the text prefix + xs.join(sep) + suffix, or "" when the list
// xs is empty, written so that xs is evaluated once where it can be: a
// list literal is joined here, and a conditional list (c ? a : b, where a
// and b are list literals or conditional lists) is the conditional of
// its joined sides. Any other list is evaluated twice (its size, then its
// join): make it a variable when it is dear.
func Joined(xs Expr, sep, prefix, suffix string) Expr {
	switch v := xs.(type) {
	case list:
		if len(v) == 0 {
			return Str("")
		}
		parts := []Expr{Str(prefix)}
		for i, x := range v {
			if i > 0 {
				parts = append(parts, Str(sep))
			}
			parts = append(parts, x)
		}
		return Concat(append(parts, Str(suffix))...)
	case cond:
		if isListChoice(v.a) && isListChoice(v.b) {
			return Cond(v.c, Joined(v.a, sep, prefix, suffix), Joined(v.b, sep, prefix, suffix))
		}
	}
	return Cond(Gt(Call("size", xs), Int(0)), Concat(Str(prefix), Method(xs, "join", Str(sep)), Str(suffix)), Str(""))
}

// isListChoice reports whether e is a list literal or a conditional of
// such.
func isListChoice(e Expr) bool {
	switch v := e.(type) {
	case list:
		return true
	case cond:
		return isListChoice(v.a) && isListChoice(v.b)
	}
	return false
}

// When is c ? x : []: the list x only when c holds.
func When(c, x Expr) Expr { return Cond(c, x, List()) }

// list is a list literal.
type list []Expr

func (l list) prec() int { return precPrimary }
func (l list) write(b *strings.Builder) {
	b.WriteString("[")
	writeList(b, l)
	b.WriteString("]")
}

// List is the list literal of xs.
func List(xs ...Expr) Expr { return list(xs) }
