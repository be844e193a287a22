// Package celgo runs a template parameter's expression with cel-go, in
// the environment of Kubernetes' admission policies and under the API
// server's cost limit (CostLimit), so that the admission policy compiled
// from the template computes the same value.
//
// It is the only package of the project's shipped code that links
// cel-go. Package podexpr evaluates the expressions written in its subset
// itself and hands the others to an Evaluator: this package's, in the
// process (kinject-live, kinject-cel, the tests), or kinject-cel's, in a
// helper process started on first need (inject-fn and kubectl-inject,
// which do not link cel-go, so that they start as fast as a program that
// only links kyaml).
//
// It imports nothing of the project: podexpr's tests use it without a
// cycle.
package celgo
