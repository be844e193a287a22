package podexpr

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"sync"

	"github.com/google/cel-go/cel"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
)

// The checked ASTs of the embedded default's expressions, by expression
// text (base64 of a CheckedExpr). A text here is known to compile, so the
// default's expressions, in the subset the core evaluates itself, need no
// cel-go environment at all; when cel-go does run one (an evaluation the
// subset leaves to it), the parse and the check, whose first run in a
// process costs more than a small --local or inject-fn run, are skipped.
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

// precompiledAST returns the checked AST of text when it is precompiled.
func precompiledAST(text string) (*cel.Ast, bool) {
	b64, ok := precompiled()[text]
	if !ok {
		return nil, false
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, false
	}
	var checked exprpb.CheckedExpr
	if err := proto.Unmarshal(data, &checked); err != nil {
		return nil, false
	}
	return cel.CheckedExprToAst(&checked), true
}

// compileChecked compiles text in the expressions' environment and
// returns its checked AST as precompiledAST stores it (the test that keeps
// the stored ASTs current calls it).
func compileChecked(text string) (string, error) {
	env, err := celEnv()
	if err != nil {
		return "", err
	}
	ast, iss := env.Compile(text)
	if iss.Err() != nil {
		return "", iss.Err()
	}
	checked, err := cel.AstToCheckedExpr(ast)
	if err != nil {
		return "", err
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(checked)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(data), nil
}
