package podexpr

import "sync"

// A parameter's expression is CEL over the pod template seen as a Pod
// (object.metadata, object.spec), the language and the libraries of
// Kubernetes' admission policies, so that the policy compiled from the
// template (pkg/admission) carries the same text and computes the same
// value. This package evaluates the subset itself; a Compiler (cel-go,
// package celgo) compiles and runs the rest.

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
