package expr

import (
	"strconv"
	"strings"
)

// lineWidth is the width the policy's expressions are folded to.
const lineWidth = 120

// Pretty is e printed to read in a policy: on one line when it fits in
// lineWidth, otherwise broken at its outermost operator (one operand, one
// list item or one branch of a conditional chain per line), indented.
func Pretty(e Expr) string { return pretty(e, "", 0) }

// pretty prints e at indent, in a context that needs precedence min.
func pretty(e Expr, indent string, min int) string { return prettyAfter(e, indent, 0, min) }

// prettyAfter prints e as pretty does, its first line starting lead
// columns after indent (a map value, after its key).
func prettyAfter(e Expr, indent string, lead, min int) string {
	flat := Text(e)
	paren := e.prec() < min
	if paren {
		flat = "(" + flat + ")"
	}
	if len(indent)+lead+len(flat) <= lineWidth {
		return flat
	}
	if paren {
		// The lines after the parenthesis are indented under it.
		return "(" + pretty(e, indent+"  ", 0) + ")"
	}
	var out string
	switch x := e.(type) {
	case cond:
		out = prettyCond(x, indent)
	case binary:
		out = prettyBinary(x, indent)
	case list:
		out = prettyItems("[", "]", x, indent)
	case mapLit:
		out = prettyMapIn("", "", x, indent, lead)
	case not:
		out = "!" + pretty(x.x, indent, precUnary)
	case member:
		if x.recv == nil {
			if x.kind != '(' || len(x.args) == 0 {
				return flat
			}
			if len(x.args) == 1 && isAggregate(x.args[0]) {
				// dyn([...]): the brackets hug the parentheses.
				if l, ok := x.args[0].(list); ok {
					return hugOrFill(x.name+"([", "])", prettyPieces(l, indent), indent, lead)
				}
				return prettyMapIn(x.name+"(", ")", x.args[0].(mapLit), indent, lead)
			}
			return prettyItems(x.name+"(", ")", x.args, indent)
		}
		// The receiver folded, then the selection, index or call; a call
		// that does not fit after it goes on a line of its own, indented
		// (CEL reads a newline before "." as a space).
		recv := pretty(x.recv, indent, precMember)
		recvFlat := Text(x.recv)
		if x.recv.prec() < precMember {
			recvFlat = "(" + recvFlat + ")"
		}
		suffix := strings.TrimPrefix(flat, recvFlat)
		last := recv[strings.LastIndex(recv, "\n")+1:]
		if len(last)+len(suffix) <= lineWidth || x.kind != '(' {
			return recv + suffix
		}
		var args strings.Builder
		writeList(&args, x.args)
		if args.Len() <= 40 {
			// A long chain of short calls: .replace("\t", "\\t").
			return recv + "\n" + indent + "  " + suffix
		}
		out = prettyItems(recv+"."+x.name+"(", ")", x.args, indent)
	default:
		return flat
	}
	return out
}

// prettyCond prints a conditional chain as one case per line:
// c1 ? a1 :
// c2 ? a2 :
// otherwise
func prettyCond(c cond, indent string) string {
	var b strings.Builder
	var e Expr = c
	for {
		x, ok := e.(cond)
		if !ok {
			break
		}
		b.WriteString(pretty(x.c, indent, precOr) + " ?")
		if a := pretty(x.a, indent+"  ", precOr); strings.Contains(a, "\n") || len(indent)+len(Text(x.c))+len(a) > lineWidth {
			b.WriteString("\n" + indent + "  " + a)
		} else {
			b.WriteString(" " + a)
		}
		b.WriteString(" :\n" + indent)
		e = x.b
	}
	b.WriteString(pretty(e, indent, precCond))
	return b.String()
}

// longConjunction is the number of operands from which a conjunction (a
// subset check: every field the template sets, compared) fills its lines.
const longConjunction = 8

// prettyBinary prints one operand per line, the operator ending the line;
// a concatenation (+) and a long conjunction fill their lines instead, as
// text reads.
func prettyBinary(o binary, indent string) string {
	if o.op == "+" || o.op == "&&" && len(o.operands) >= longConjunction {
		return prettyFill(o, indent)
	}
	var b strings.Builder
	for i, x := range o.operands {
		p := o.prec()
		if i > 0 {
			b.WriteString(" " + o.op + "\n" + indent)
			p++
		}
		b.WriteString(pretty(x, indent, p))
	}
	return b.String()
}

// prettyFill prints the operands of o on as few lines as fit in
// lineWidth, the operator ending each line; an operand that takes lines of
// its own starts on a new one, and the next may follow its last line.
func prettyFill(o binary, indent string) string {
	pieces := make([]string, len(o.operands))
	for i, x := range o.operands {
		p := o.prec()
		if i > 0 {
			p++ // the right operand binds tighter
		}
		pieces[i] = pretty(x, indent, p)
	}
	return fill(pieces, " "+o.op, indent, len(indent), true)
}

// prettyItems prints open, the items, indented, and close. Items that
// fit on one line share lines, as many as fit in lineWidth; an item that
// takes lines of its own starts a new line.
func prettyItems(open, close string, items []Expr, indent string) string {
	return hugOrFill(open, close, prettyPieces(items, indent), indent, 0)
}

// prettyPieces are the items printed one by one, indented under indent.
func prettyPieces(items []Expr, indent string) []string {
	pieces := make([]string, len(items))
	for i, x := range items {
		pieces[i] = pretty(x, indent+"  ", 0)
	}
	return pieces
}

// hugOrFill writes the printed items between open and close. The
// brackets hug the items ([a, b,\n  c]) when the first line fits after
// open and every item fits on a line, or there is one item (which may
// take lines); otherwise they stand on lines of their own around the
// filled items. open starts lead columns after indent, or at the start
// of its last line.
func hugOrFill(open, close string, pieces []string, indent string, lead int) string {
	col := len(indent) + lead + len(open)
	if i := strings.LastIndex(open, "\n"); i >= 0 {
		col = len(open) - i - 1
	}
	first, _, _ := strings.Cut(pieces[0], "\n")
	hug := col+len(first)+1 <= lineWidth
	for _, p := range pieces {
		multi := strings.Contains(p, "\n")
		if multi && len(pieces) > 1 || !multi && len(indent)+2+len(p)+1 > lineWidth {
			hug = false
		}
	}
	if !hug {
		return open + "\n" + indent + "  " + fillItems(pieces, indent, len(indent)+2) + "\n" + indent + close
	}
	return open + fillItems(pieces, indent, col) + close
}

// prettyMapIn prints the entries of m as prettyItems prints items,
// between open and close (dyn( and ), or nothing).
func prettyMapIn(open, close string, m mapLit, indent string, lead int) string {
	pieces := make([]string, len(m.keys))
	for i, k := range m.keys {
		key := k
		if m.typeName == "" {
			key = strconv.Quote(k)
		}
		pieces[i] = key + ": " + prettyAfter(m.values[i], indent+"  ", len(key)+2, 0)
	}
	return hugOrFill(open+m.typeName+"{", "}"+close, pieces, indent, lead)
}

// fillItems writes the printed items of a list, a map or a call, comma
// separated, the first at column col, the others on lines indented under
// indent; a multi-line item stands alone.
func fillItems(pieces []string, indent string, col int) string {
	return fill(pieces, ",", indent+"  ", col, false)
}

// fill writes pieces on as few lines as fit in lineWidth, the first at
// column col: glue ends every piece but the last (",", " &&"), then a
// space or a new line indented to cont. A piece that takes lines starts
// a new one; with follow, the next piece may go on after its last line.
func fill(pieces []string, glue, cont string, col int, follow bool) string {
	var b strings.Builder
	for i, s := range pieces {
		if i < len(pieces)-1 {
			s += glue
		}
		multi := strings.Contains(s, "\n")
		switch {
		case i == 0:
		case !multi && col+1+len(s) <= lineWidth:
			b.WriteString(" ")
			col++
		default:
			b.WriteString("\n" + cont)
			col = len(cont)
		}
		b.WriteString(s)
		switch {
		case multi && !follow:
			col = lineWidth // nothing follows a multi-line item on its line
		case multi:
			col = len(s) - strings.LastIndex(s, "\n") - 1
		default:
			col += len(s)
		}
	}
	return b.String()
}

// isAggregate reports whether e is a list or map literal.
func isAggregate(e Expr) bool {
	switch e.(type) {
	case list, mapLit:
		return true
	}
	return false
}
