// Package podexpr evaluates a template parameter's expression: CEL over a
// pod template seen as a Pod (object.metadata, object.spec), in the
// environment of Kubernetes' admission policies and under the API server's
// cost limit, so that the admission policy compiled from the template
// computes the same value.
//
// An Expression is shared by every template carrying its text (New) and
// prepared once. One written in the subset of CEL that templates use
// (fields, indexes, has, size, the comprehension macros, comparisons:
// parse.go) is evaluated over the pod template's YAML nodes, reading only
// what it touches (eval.go, view.go); cel-go evaluates the others, and any
// evaluation the subset's evaluator is not sure to give as cel-go would (an
// error, a comparison across types, an alias), over the pod template
// converted to plain values (object.go). Errors always come from cel-go,
// in its words.
//
// This package does not link cel-go: a Compiler does (program.go,
// compiler.go). A program that links it (kinject-live, kinject-cel, the
// tests) says so with Use(celgo.Compile); the others (inject-fn,
// kubectl-inject) run kinject-cel in a helper process on first need
// (helper.go; its protocol in helper_wire.go, its side in
// helper_serve.go), so that cel-go's initialisers do not run at their
// every start.
//
// A Pod is the pod template's metadata and spec, less what the profile
// itself injected (Own), so that an update computes what the first
// injection did.
//
// The embedded default's expressions are in the subset and precompiled
// (expressions.json, checked by TestPrecompiledExpressions): known to
// compile, so the default path needs no compiler, and parsed already when
// cel-go does run.
package podexpr
