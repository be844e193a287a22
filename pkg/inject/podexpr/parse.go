package podexpr

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
)

// The subset of CEL that templates' expressions use, read by a small
// parser and run by the evaluator of eval.go straight over the
// pod template's nodes. An expression written in it needs no cel-go at
// run time: no environment, no program, no conversion of the Pod into
// plain values. Anything else in the text (another function, a float or
// bytes literal, string escapes other than the simple ones, the optional
// syntax, arithmetic) makes parseSubset refuse the whole expression, and
// cel-go runs it as before. The subset:
//
//	literals   null, true, false, decimal ints, '...' and "..." strings
//	variables  object; the iteration variables of the macros
//	operators  ?:  ||  &&  !  ==  !=  <  <=  >  >=  in  x.f  x[i]
//	functions  has(x.f), size(x), x.size(), dyn(x),
//	           x.startsWith(s), x.endsWith(s), x.contains(s)
//	macros     x.exists(v, p), x.all(v, p), x.exists_one(v, p),
//	           x.filter(v, p), x.map(v, e)
//	lists      [a, b, ...]

// subsetOp is the operation of a subsetNode.
type subsetOp int

const (
	opLiteral subsetOp = iota // lit
	opIdent                   // name
	opSelect                  // args[0].name
	opHas                     // has(args[0].name)
	opIndex                   // args[0][args[1]]
	opCall                    // name(args...), a receiver call's receiver first
	opMacro                   // args[0].name(iter, args[1])
	opNot                     // !args[0]
	opAnd                     // args[0] && args[1]
	opOr                      // args[0] || args[1]
	opCond                    // args[0] ? args[1] : args[2]
	opCompare                 // args[0] name args[1]: == != < <= > >= in
	opList                    // [args...]
)

// subsetNode is one node of an expression parsed in the subset.
type subsetNode struct {
	op   subsetOp
	name string // identifier, field, function, macro or operator
	iter string // a macro's iteration variable
	lit  any    // a literal: nil, bool, int64 or string
	args []*subsetNode
}

// receiverCalls are the functions called on a receiver, by their number
// of arguments besides it.
var receiverCalls = map[string]int{"size": 0, "startsWith": 1, "endsWith": 1, "contains": 1}

// globalCalls are the functions called without a receiver.
var globalCalls = map[string]bool{"size": true, "dyn": true}

// macros are the comprehensions on a receiver.
var macros = map[string]bool{"exists": true, "all": true, "exists_one": true, "filter": true, "map": true}

// subsetParser is a recursive descent parser of CEL's grammar, less what
// the subset leaves out.
type subsetParser struct {
	toks []string
	pos  int
	vars []string // object, then the iteration variables in scope
}

// parseSubset parses text in the subset; ok is false when text uses
// anything outside it.
func parseSubset(text string) (n *subsetNode, ok bool) {
	toks, ok := tokenize(text)
	if !ok {
		return nil, false
	}
	p := &subsetParser{toks: toks, vars: []string{"object"}}
	n = p.expr()
	if n == nil || p.pos != len(p.toks) {
		return nil, false
	}
	return n, true
}

func (p *subsetParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *subsetParser) accept(tok string) bool {
	if p.peek() == tok {
		p.pos++
		return true
	}
	return false
}

// expr: or ["?" or ":" expr]
func (p *subsetParser) expr() *subsetNode {
	c := p.binary(0)
	if c == nil || !p.accept("?") {
		return c
	}
	a := p.binary(0)
	if a == nil || !p.accept(":") {
		return nil
	}
	b := p.expr()
	if b == nil {
		return nil
	}
	return &subsetNode{op: opCond, args: []*subsetNode{c, a, b}}
}

// binaryLevels are the binary operators from the loosest to the tightest.
var binaryLevels = [][]string{{"||"}, {"&&"}, {"==", "!=", "<", "<=", ">", ">=", "in"}}

// binary parses the left-associative operators of binaryLevels[level] and
// tighter.
func (p *subsetParser) binary(level int) *subsetNode {
	if level == len(binaryLevels) {
		return p.unary()
	}
	left := p.binary(level + 1)
	for left != nil {
		op := p.peek()
		if !slices.Contains(binaryLevels[level], op) {
			return left
		}
		p.pos++
		right := p.binary(level + 1)
		if right == nil {
			return nil
		}
		switch op {
		case "||":
			left = &subsetNode{op: opOr, args: []*subsetNode{left, right}}
		case "&&":
			left = &subsetNode{op: opAnd, args: []*subsetNode{left, right}}
		default:
			left = &subsetNode{op: opCompare, name: op, args: []*subsetNode{left, right}}
		}
	}
	return nil
}

// unary: "!" unary | "-" INT | member
func (p *subsetParser) unary() *subsetNode {
	if p.accept("!") {
		x := p.unary()
		if x == nil {
			return nil
		}
		return &subsetNode{op: opNot, args: []*subsetNode{x}}
	}
	if p.accept("-") {
		i, err := strconv.ParseInt("-"+p.peek(), 10, 64)
		if err != nil {
			return nil
		}
		p.pos++
		return &subsetNode{op: opLiteral, lit: i}
	}
	return p.member()
}

// member: primary { "." IDENT [ "(" args ")" ] | "[" expr "]" }
func (p *subsetParser) member() *subsetNode {
	x := p.primary()
	for x != nil {
		switch {
		case p.accept("."):
			name := p.peek()
			if !isIdent(name) {
				return nil
			}
			p.pos++
			if p.peek() == "(" {
				x = p.receiverCall(x, name)
			} else {
				x = &subsetNode{op: opSelect, name: name, args: []*subsetNode{x}}
			}
		case p.accept("["):
			i := p.expr()
			if i == nil || !p.accept("]") {
				return nil
			}
			x = &subsetNode{op: opIndex, args: []*subsetNode{x, i}}
		default:
			return x
		}
	}
	return nil
}

// receiverCall parses the arguments of recv.name(...), a macro or a
// function.
func (p *subsetParser) receiverCall(recv *subsetNode, name string) *subsetNode {
	p.pos++ // (
	if macros[name] {
		v := p.peek()
		if !isIdent(v) || v == "object" {
			return nil
		}
		p.pos++
		if !p.accept(",") {
			return nil
		}
		p.vars = append(p.vars, v)
		body := p.expr()
		p.vars = p.vars[:len(p.vars)-1]
		if body == nil || !p.accept(")") {
			return nil
		}
		return &subsetNode{op: opMacro, name: name, iter: v, args: []*subsetNode{recv, body}}
	}
	n, known := receiverCalls[name]
	if !known {
		return nil
	}
	args := p.args(")")
	if args == nil || len(args) != n {
		return nil
	}
	return &subsetNode{op: opCall, name: name, args: append([]*subsetNode{recv}, args...)}
}

// args parses expressions separated by commas up to the closing token;
// nil when they do not parse (an empty list is not nil).
func (p *subsetParser) args(closing string) []*subsetNode {
	args := []*subsetNode{}
	if p.accept(closing) {
		return args
	}
	for {
		a := p.expr()
		if a == nil {
			return nil
		}
		args = append(args, a)
		if p.accept(closing) {
			return args
		}
		if !p.accept(",") {
			return nil
		}
	}
}

// primary: literal | IDENT | IDENT "(" args ")" | "(" expr ")" | "[" args "]"
func (p *subsetParser) primary() *subsetNode {
	tok := p.peek()
	p.pos++
	switch {
	case tok == "(":
		x := p.expr()
		if x == nil || !p.accept(")") {
			return nil
		}
		return x
	case tok == "[":
		items := p.args("]")
		if items == nil {
			return nil
		}
		return &subsetNode{op: opList, args: items}
	case tok == "null":
		return &subsetNode{op: opLiteral}
	case tok == "true" || tok == "false":
		return &subsetNode{op: opLiteral, lit: tok == "true"}
	case tok != "" && (tok[0] == '\'' || tok[0] == '"'):
		return &subsetNode{op: opLiteral, lit: tok[1:]}
	case tok != "" && ascii.IsDigit(tok[0]):
		i, err := strconv.ParseInt(tok, 10, 64)
		if err != nil || (len(tok) > 1 && tok[0] == '0') {
			return nil
		}
		return &subsetNode{op: opLiteral, lit: i}
	case isIdent(tok) && p.peek() == "(":
		return p.globalCall(tok)
	case isIdent(tok) && slices.Contains(p.vars, tok):
		return &subsetNode{op: opIdent, name: tok}
	}
	return nil
}

// globalCall parses has(x.f) and the functions of globalCalls.
func (p *subsetParser) globalCall(name string) *subsetNode {
	p.pos++ // (
	args := p.args(")")
	if len(args) != 1 {
		return nil
	}
	if name == "has" {
		if args[0].op != opSelect {
			return nil
		}
		return &subsetNode{op: opHas, name: args[0].name, args: args[0].args}
	}
	if !globalCalls[name] {
		return nil
	}
	return &subsetNode{op: opCall, name: name, args: args}
}

// isIdent reports whether tok is an identifier, not a keyword.
func isIdent(tok string) bool {
	if tok == "" || !(tok[0] == '_' || ascii.IsAlnum(tok[0]) && !ascii.IsDigit(tok[0])) {
		return false
	}
	switch tok {
	case "null", "true", "false", "in":
		return false
	}
	return ascii.All(tok, func(c byte) bool { return c == '_' || ascii.IsAlnum(c) })
}

// twoCharOps are the operators of two characters.
var twoCharOps = []string{"||", "&&", "==", "!=", "<=", ">="}

// tokenize splits text into tokens: identifiers, decimal ints, strings
// (kept with their opening quote and unescaped), operators and
// punctuation. ok is false at anything the subset does not read.
func tokenize(text string) (toks []string, ok bool) {
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && strings.HasPrefix(text[i:], "//"):
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '_' || ascii.IsAlnum(c):
			j := i
			for j < len(text) && (text[j] == '_' || ascii.IsAlnum(text[j])) {
				j++
			}
			tok := text[i:j]
			if ascii.IsDigit(c) && !ascii.All(tok, ascii.IsDigit) {
				return nil, false // 0x1F, 1u, 1e3: cel-go reads them
			}
			toks, i = append(toks, tok), j
		case c == '\'' || c == '"':
			s, n, ok := scanString(text[i:])
			if !ok {
				return nil, false
			}
			toks, i = append(toks, s), i+n
		case i+1 < len(text) && slices.Contains(twoCharOps, text[i:i+2]):
			toks, i = append(toks, text[i:i+2]), i+2
		case strings.IndexByte("()[].,?:!<>-", c) >= 0:
			toks, i = append(toks, text[i:i+1]), i+1
		default:
			return nil, false
		}
	}
	return toks, true
}

// scanString reads a quoted string at the start of s: the token (its
// opening quote and the unescaped text) and the bytes it takes. Triple
// quotes and escapes other than \\ \' \" \n \t are left to cel-go.
func scanString(s string) (tok string, n int, ok bool) {
	q := s[0]
	if strings.HasPrefix(s, strings.Repeat(string(q), 3)) {
		return "", 0, false
	}
	var b strings.Builder
	b.WriteByte(q)
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case q:
			return b.String(), i + 1, true
		case '\n', '\r':
			return "", 0, false
		case '\\':
			if i+1 == len(s) {
				return "", 0, false
			}
			i++
			switch s[i] {
			case '\\', '\'', '"':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", 0, false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}
