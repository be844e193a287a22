package expr

// ReplaceString is e with every string literal s replaced by with, and
// how many it replaced: a long literal written in several places is
// bound once to a variable and read from it.
func ReplaceString(e Expr, s string, with Expr) (Expr, int) {
	r := replacer{from: Text(Str(s)), with: with}
	out := r.walk(e)
	return out, r.n
}

type replacer struct {
	from string
	with Expr
	n    int
}

func (r *replacer) walk(e Expr) Expr {
	switch x := e.(type) {
	case literal:
		if x.kind == 's' && x.text == r.from {
			r.n++
			return r.with
		}
	case member:
		if x.recv != nil {
			x.recv = r.walk(x.recv)
		}
		x.args = r.each(x.args)
		return x
	case binary:
		x.operands = r.each(x.operands)
		return x
	case not:
		return not{r.walk(x.x)}
	case cond:
		return cond{r.walk(x.c), r.walk(x.a), r.walk(x.b)}
	case mapLit:
		x.values = r.each(x.values)
		return x
	case list:
		return list(r.each(x))
	}
	return e
}

func (r *replacer) each(xs []Expr) []Expr {
	if xs == nil {
		return nil
	}
	out := make([]Expr, len(xs))
	for i, x := range xs {
		out[i] = r.walk(x)
	}
	return out
}
