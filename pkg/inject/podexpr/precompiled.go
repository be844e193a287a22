package podexpr

import (
	_ "embed"
	"encoding/json"
	"sync"
)

// The checked ASTs of the embedded default's expressions, by expression
// text (base64 of a CheckedExpr, as celgo.CompileChecked gives it). A text
// here is known to compile, so the default's expressions, in the subset
// the core evaluates itself, need no compiler at all; when cel-go does run
// one (an evaluation the subset leaves to it), the parse and the check,
// whose first run in a process costs more than a small --local or
// inject-fn run, are skipped.
// TestPrecompiledExpressions compiles every text again and fails when this
// file is stale (go test ./pkg/inject/podexpr -update rewrites it).
//
//go:embed expressions.json
var precompiledJSON []byte

var precompiled = sync.OnceValue(func() map[string]string {
	var m map[string]string
	_ = json.Unmarshal(precompiledJSON, &m) // checked by the test
	return m
})
