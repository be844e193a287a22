package podexpr

import (
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/ascii"
	"strconv"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A parameter's expression is CEL over the pod template seen as a Pod
// (object.metadata, object.spec), the language and the libraries of
// Kubernetes' admission policies, so that the policy compiled from the
// template (pkg/admission) carries the same text and computes the same
// value. The Kubernetes-specific libraries (quantity, url, ip, cidr,
// semver, format, authz, the regex and list helpers of
// k8s.io/apiserver/pkg/cel/library) are not linked: an expression that
// calls them fails to compile here, with an error naming the parameter.

// CostLimit bounds one evaluation, in cel-go's cost units: the
// API server's per-call limit, so that no template hangs the core and an
// expression that runs here runs in a policy.
const CostLimit = 1_000_000

// celEnv is built once, on the first expression compiled: a binary whose
// template has none never pays for it.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("object", cel.DynType),
		// The base environment of the API server (k8s.io/apiserver
		// pkg/cel/environment), less its own libraries.
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
		ext.Lists(ext.ListsVersion(3)),
	)
})

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
	prg  cel.Program
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

func (e *Expression) program() (cel.Program, error) {
	e.once.Do(func() {
		env, err := celEnv()
		if err != nil {
			e.err = fmt.Errorf("CEL environment: %w", err)
			return
		}
		ast, ok := precompiledAST(e.text)
		if !ok {
			var iss *cel.Issues
			if ast, iss = env.Compile(e.text); iss.Err() != nil {
				e.err = iss.Err()
				return
			}
		}
		e.prg, e.err = env.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
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
	out, _, err := prg.Eval(map[string]any{"object": pod.object()})
	if err != nil {
		return nil, err
	}
	return celValue(out), nil
}

// Fast reports whether the expression runs without cel-go wherever the
// subset's evaluator is sure (it is in the subset) and is known to
// compile without it (precompiled): what the embedded default's are.
func (e *Expression) Fast() bool {
	e.prepared.Do(e.prepare)
	_, precompiled := precompiled()[e.text]
	return e.subset != nil && precompiled
}

// celValue is a result of cel-go as the subset's evaluator gives it: nil,
// int64 or string, or v itself for the types no parameter takes.
func celValue(v ref.Val) any {
	switch v.Type() {
	case types.NullType:
		return nil
	case types.IntType:
		return int64(v.(types.Int))
	case types.StringType:
		return string(v.(types.String))
	}
	return v
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
