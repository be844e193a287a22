package admission

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The label selector of -l and the settings' selector, read into the
// structured form of an admission binding. The grammar is the API
// server's (k8s.io/apimachinery/pkg/labels.Parse):
//
//	selector    ::= requirement { "," requirement }
//	requirement ::= [ "!" ] KEY [ ( "=" | "==" | "!=" | "<" | ">" ) [ VALUE ]
//	                            | ( "in" | "notin" ) "(" [ VALUE ] { "," [ VALUE ] } ")" ]
//
// Keys and values are not checked here: inject.Settings.Validate has
// matched the selector against a label set with kyaml's copy of that
// parser, which checks them, before any injector (and so any policy)
// exists. It is read here rather than with apimachinery's parser, whose
// package initialisers (regular expressions, klog) would run at every
// start of inject-fn; TestObjectSelectorAsAPIServer compares the two.

// selectorToken is a token of a label selector: an operator or
// punctuation ("!", "!=", "=", "==", "<", ">", "(", ")", ","), a word
// (a key, a value, or the words in and notin), or the end ("").
type selectorToken struct {
	text string
	word bool
}

// isSelectorSymbol reports the bytes that end a word.
func isSelectorSymbol(c byte) bool { return strings.IndexByte("=!(),<>", c) >= 0 }

func isSelectorSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// selectorTokens cuts s into tokens, the end last. A symbol is the
// longest of "!=" and "==" that starts there, or one byte. A NUL byte
// reads as the API server's parser reads it: where a token would begin,
// the end of the selector; right after a token, nothing.
func selectorTokens(s string) []selectorToken {
	var out []selectorToken
	for i := 0; ; {
		for i < len(s) && isSelectorSpace(s[i]) {
			i++
		}
		start := i
		switch {
		case i == len(s) || s[i] == 0:
			return append(out, selectorToken{})
		case isSelectorSymbol(s[i]):
			i++
			if i < len(s) && s[i] == '=' && (s[start] == '!' || s[start] == '=') {
				i++
			}
			out = append(out, selectorToken{text: s[start:i]})
		default:
			for i < len(s) && s[i] != 0 && !isSelectorSymbol(s[i]) && !isSelectorSpace(s[i]) {
				i++
			}
			out = append(out, selectorToken{text: s[start:i], word: true})
		}
		if i < len(s) && s[i] == 0 {
			i++
		}
	}
}

// selectorRequirement is one requirement: the key, the operator (=, ==,
// !=, <, >, in, notin, or exists and !exists for a bare key) and the
// values, sorted and without repeats.
type selectorRequirement struct {
	key, op string
	values  []string
}

// parseLabelSelector reads s into its requirements, sorted by key as the
// API server's parser sorts them.
func parseLabelSelector(s string) ([]selectorRequirement, error) {
	p := selectorParser{tokens: selectorTokens(s)}
	var reqs []selectorRequirement
	if p.peek() == (selectorToken{}) {
		return nil, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
		switch t := p.next(); {
		case t == selectorToken{}:
			// The API server's parser sorts with sort.Sort by key alone:
			// the same call gives requirements of one key the same order.
			sort.Sort(byKey(reqs))
			return reqs, nil
		case t.text != ",":
			return nil, fmt.Errorf("found %q, expected ',' or the end", t.text)
		}
	}
}

type byKey []selectorRequirement

func (b byKey) Len() int           { return len(b) }
func (b byKey) Less(i, j int) bool { return b[i].key < b[j].key }
func (b byKey) Swap(i, j int)      { b[i], b[j] = b[j], b[i] }

type selectorParser struct {
	tokens []selectorToken
	at     int
}

func (p *selectorParser) peek() selectorToken { return p.tokens[p.at] }

func (p *selectorParser) next() selectorToken {
	t := p.tokens[p.at]
	if p.at < len(p.tokens)-1 {
		p.at++
	}
	return t
}

func (p *selectorParser) requirement() (selectorRequirement, error) {
	r := selectorRequirement{op: "exists"}
	key := p.next()
	if key.text == "!" {
		r.op = "!exists"
		key = p.next()
	}
	if !key.word {
		return r, fmt.Errorf("found %q, expected a key", key.text)
	}
	r.key = key.text
	if after := p.peek(); after == (selectorToken{}) || after.text == "," {
		return r, nil
	}
	if r.op == "!exists" {
		return r, fmt.Errorf("found %q after !%s, expected ',' or the end", p.peek().text, r.key)
	}
	op := p.next()
	switch op.text {
	case "=", "==", "!=", "<", ">":
		r.op = op.text
		value := ""
		if t := p.peek(); t.word {
			value = p.next().text
		} else if t != (selectorToken{}) && t.text != "," {
			return r, fmt.Errorf("found %q after %s%s, expected a value", t.text, r.key, r.op)
		}
		r.values = []string{value}
		return r, nil
	case "in", "notin":
		r.op = op.text
		values, err := p.valueSet()
		r.values = values
		return r, err
	}
	return r, fmt.Errorf("found %q after %s, expected =, ==, !=, in, notin, < or >", op.text, r.key)
}

// valueSet reads "(" [ VALUE ] { "," [ VALUE ] } ")": a missing value is
// the empty string ("()" and "(a,)" hold it).
func (p *selectorParser) valueSet() ([]string, error) {
	if t := p.next(); t.text != "(" {
		return nil, fmt.Errorf("found %q, expected '('", t.text)
	}
	var values []string
	for {
		value := ""
		if p.peek().word {
			value = p.next().text
		}
		values = append(values, value)
		switch t := p.next(); t.text {
		case ",":
		case ")":
			slices.Sort(values)
			return slices.Compact(values), nil
		default:
			return nil, fmt.Errorf("found %q in a value set, expected a value, ',' or ')'", t.text)
		}
	}
}
