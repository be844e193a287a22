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
func pretty(e Expr, indent string, min int) string {
	flat := Text(e)
	paren := e.prec() < min
	if paren {
		flat = "(" + flat + ")"
	}
	if len(indent)+len(flat) <= lineWidth {
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
		out = prettyMap(x, indent)
	case not:
		out = "!" + pretty(x.x, indent, precUnary)
	case member:
		if x.recv == nil {
			if x.kind != '(' || len(x.args) == 0 {
				return flat
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

// prettyBinary prints one operand per line, the operator ending the line;
// a concatenation (+) fills its lines instead, as text reads.
func prettyBinary(o binary, indent string) string {
	if o.op == "+" {
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
// its own starts on a new one.
func prettyFill(o binary, indent string) string {
	var b strings.Builder
	col := len(indent)
	for i, x := range o.operands {
		p := o.prec()
		if i > 0 {
			p++ // the right operand of + binds tighter
		}
		s := pretty(x, indent, p)
		multi := strings.Contains(s, "\n")
		switch {
		case i == 0:
		case !multi && col+3+len(s) <= lineWidth:
			b.WriteString(" " + o.op + " ")
			col += 3
		default:
			b.WriteString(" " + o.op + "\n" + indent)
			col = len(indent)
		}
		b.WriteString(s)
		if multi {
			col = len(s) - strings.LastIndex(s, "\n") - 1
		} else {
			col += len(s)
		}
	}
	return b.String()
}

// prettyItems prints open, the items one per line, indented, and close.
func prettyItems(open, close string, items []Expr, indent string) string {
	var b strings.Builder
	b.WriteString(open)
	for i, x := range items {
		b.WriteString("\n" + indent + "  " + pretty(x, indent+"  ", 0))
		if i < len(items)-1 {
			b.WriteString(",")
		}
	}
	b.WriteString("\n" + indent + close)
	return b.String()
}

// prettyMap prints one entry per line.
func prettyMap(m mapLit, indent string) string {
	var b strings.Builder
	b.WriteString(m.typeName + "{")
	for i, k := range m.keys {
		key := k
		if m.typeName == "" {
			key = strconv.Quote(k)
		}
		b.WriteString("\n" + indent + "  " + key + ": " + pretty(m.values[i], indent+"  ", 0))
		if i < len(m.keys)-1 {
			b.WriteString(",")
		}
	}
	b.WriteString("\n" + indent + "}")
	return b.String()
}
