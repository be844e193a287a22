package podexpr

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A parameter's expression is CEL over the pod template seen as a Pod
// (object.metadata, object.spec), the language and the libraries of
// Kubernetes' admission policies, so that the policy compiled from the
// template (pkg/admission) carries the same text and computes the same
// value. This package evaluates the subset itself; a Compiler (cel-go,
// package celgo) compiles and runs the rest.

// Program is a compiled expression: it evaluates over the Pod as plain
// values (podObject) and gives nil (null), an int64, a string, or another
// value for the types no parameter takes.
type Program = func(object map[string]any) (any, error)

// Compiler compiles an expression's text with cel-go; checked, when not
// empty, is its precompiled checked AST. Its errors are cel-go's.
type Compiler = func(text, checked string) (Program, error)

// compiler is what compiles the expressions the subset's evaluator leaves
// to cel-go: kinject-cel in a helper process unless the program links
// cel-go and says so (Use).
var compiler struct {
	sync.Mutex
	c Compiler
}

// Use makes c the compiler of every expression not yet compiled: a
// program that links cel-go calls Use(celgo.Compile) before its first
// expression, the others run kinject-cel (HelperCompiler).
func Use(c Compiler) {
	compiler.Lock()
	defer compiler.Unlock()
	compiler.c = c
}

func currentCompiler() Compiler {
	compiler.Lock()
	defer compiler.Unlock()
	if compiler.c == nil {
		compiler.c = HelperCompiler()
	}
	return compiler.c
}

// Expression is a parameter's expression, prepared on first use and
// shared by every template carrying its text (New). An expression in the
// subset (parse.go) is evaluated over the pod template's nodes; cel-go
// runs the others, and whatever the subset's evaluator is unsure of.
type Expression struct {
	text string

	prepared sync.Once
	subset   *subsetNode // nil: outside the subset
	invalid  error       // the text does not compile

	once sync.Once
	prg  Program
	err  error
}

// sharedExpressions holds the expressions met so far by text, so that
// every template and profile carrying the same text (the default, parsed
// again for each profile that uses it) shares one, prepared and compiled
// once per process. It stops growing at maxSharedExpressions texts.
var sharedExpressions struct {
	sync.Mutex
	m map[string]*Expression
}

const maxSharedExpressions = 256

// New returns the expression of text: the one every template carrying the
// same text shares.
func New(text string) *Expression {
	s := &sharedExpressions
	s.Lock()
	defer s.Unlock()
	if e, ok := s.m[text]; ok {
		return e
	}
	e := &Expression{text: text}
	if s.m == nil {
		s.m = map[string]*Expression{}
	}
	if len(s.m) < maxSharedExpressions {
		s.m[text] = e
	}
	return e
}

// prepare parses the text in the subset and makes sure it compiles: a
// precompiled text is known to (TestPrecompiledExpressions), any other is
// compiled by cel-go once, so that a template's mistake reads as cel-go
// words it whichever evaluator runs.
func (e *Expression) prepare() {
	e.subset, _ = parseSubset(e.text)
	if _, ok := precompiled()[e.text]; !ok {
		_, e.invalid = e.program()
	}
}

func (e *Expression) program() (Program, error) {
	e.once.Do(func() {
		e.prg, e.err = currentCompiler()(e.text, precompiled()[e.text])
	})
	return e.prg, e.err
}

// Eval evaluates the expression over the pod: nil (null), an int64, a
// string, or for the other types cel-go's value (which no parameter
// takes). An expression that does not compile gives cel-go's error.
func (e *Expression) Eval(pod *Pod) (any, error) {
	e.prepared.Do(e.prepare)
	if e.invalid != nil {
		return nil, e.invalid
	}
	if e.subset != nil {
		if view, err := pod.view(); err == nil {
			if v, err := evalSubset(e.subset, view); err == nil {
				return v, nil
			}
		}
	}
	return e.evalCEL(pod)
}

// evalCEL evaluates the expression with cel-go only.
func (e *Expression) evalCEL(pod *Pod) (any, error) {
	prg, err := e.program()
	if err != nil {
		return nil, err
	}
	return prg(pod.object())
}

// Fast reports whether the expression runs without cel-go wherever the
// subset's evaluator is sure (it is in the subset) and is known to
// compile without it (precompiled): what the embedded default's are.
func (e *Expression) Fast() bool {
	if _, ok := precompiled()[e.text]; !ok {
		return false // and nothing compiled to say so
	}
	e.prepared.Do(e.prepare)
	return e.subset != nil
}

// podObject is the pod template seen as a Pod, the object an expression
// reads: the template's metadata and spec as plain values, without what
// the pod's Own names, so that an update computes what the first
// injection did.
func podObject(p *Pod) map[string]any {
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod"}
	seen := map[*yaml.Node]any{}
	if p.Meta != nil {
		obj["metadata"] = plainValue(p.Meta, seen)
	}
	obj["spec"] = plainValue(p.Spec, seen)
	if p.Own == nil {
		return obj
	}
	if spec, ok := obj["spec"].(map[string]any); ok {
		spec = shallowCopy(spec)
		obj["spec"] = spec
		for field, names := range p.Own.Items {
			dropNamed(spec, field, names)
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		meta = shallowCopy(meta)
		obj["metadata"] = meta
		for field, keys := range p.Own.Keys {
			if m, ok := meta[field].(map[string]any); ok && len(keys) > 0 {
				kept := shallowCopy(m)
				for _, k := range keys {
					delete(kept, k)
				}
				meta[field] = kept
			}
		}
	}
	return obj
}

// plainValue converts a node to the plain values cel-go adapts (maps,
// lists, strings, int64, float64, bool, nil). The target of an alias is
// converted once and shared by every alias of it: an alias bomb stays as
// small as it is written (decoding it would expand it), and an expression
// reads only what it touches. dropNamed and podObject copy what they
// change, so a shared value is never edited.
func plainValue(n *yaml.Node, seen map[*yaml.Node]any) any {
	if v, ok := seen[n]; ok {
		return v
	}
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			v = plainValue(n.Content[0], seen)
		}
	case yaml.AliasNode:
		seen[n] = nil // a recursive alias reads as null
		v = plainValue(n.Alias, seen)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		seen[n] = m
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag != "!!str" {
				continue // merge keys are not Kubernetes data
			}
			v := plainValue(n.Content[i+1], seen)
			if v == nil {
				// A field written null is absent from the Pod the API
				// server decodes: has() is false for it at admission, and
				// so it is here.
				continue
			}
			m[k.Value] = v
		}
		return m
	case yaml.SequenceNode:
		list := make([]any, len(n.Content))
		seen[n] = list
		for i, item := range n.Content {
			list[i] = plainValue(item, seen)
		}
		return list
	case yaml.ScalarNode:
		v = scalarValue(n)
	}
	seen[n] = v
	return v
}

// scalarValue types a scalar as YAML (and JSON) resolve it.
func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!int":
		// A plain decimal (a port, say) reads the same without the
		// decoder's reflection; 0x1F, 0o17, 017, 1_000 take the decoder.
		if i, ok := decimalInt(n.Value); ok {
			return i
		}
		fallthrough
	case "!!bool", "!!float":
		var v any
		if err := n.Decode(&v); err == nil {
			if i, ok := v.(int); ok {
				return int64(i)
			}
			return v
		}
	}
	return n.Value
}

// decimalInt reads s when it is a plain decimal int (ascii.IsDecimalInt).
func decimalInt(s string) (int64, bool) {
	if !ascii.IsDecimalInt(s) {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// shallowCopy copies m, whose values may be shared with other maps.
func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// dropNamed removes the items named in names from the list spec[field].
func dropNamed(spec map[string]any, field string, names []string) {
	list, ok := spec[field].([]any)
	if !ok || len(names) == 0 {
		return
	}
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	kept := make([]any, 0, len(list)) // a copy: list may be shared
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && drop[fmt.Sprint(m["name"])] {
			continue
		}
		kept = append(kept, item)
	}
	spec[field] = kept
}
