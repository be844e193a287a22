package celgo

import (
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
)

// An expression is CEL over the pod template seen as a Pod (object.metadata,
// object.spec), the language and the libraries of Kubernetes' admission
// policies. The Kubernetes-specific libraries (quantity, url, ip, cidr,
// semver, format, authz, the regex and list helpers of
// k8s.io/apiserver/pkg/cel/library) are not linked: an expression that
// calls them fails to compile here, with an error naming the parameter.

// CostLimit bounds one evaluation, in cel-go's cost units: the API
// server's per-call limit, so that no template hangs the core and an
// expression that runs here runs in a policy.
const CostLimit = 1_000_000

// env is built once, on the first expression compiled: a process whose
// templates have none never pays for it.
var env = sync.OnceValues(func() (*cel.Env, error) {
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

// Compile compiles text with cel-go in this process and returns its
// program (podexpr.Use(celgo.Compile) makes it podexpr's compiler).
// checked, when not empty, is the text's checked AST as CompileChecked
// gives it (a precompiled expression), which spares the parse and the
// check. The error is cel-go's.
func Compile(text, checked string) (func(object map[string]any) (any, error), error) {
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	ast, ok := checkedAST(checked)
	if !ok {
		var iss *cel.Issues
		if ast, iss = e.Compile(text); iss.Err() != nil {
			return nil, iss.Err()
		}
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	return func(object map[string]any) (any, error) { return eval(prg, object) }, nil
}

// eval evaluates prg over object (the Pod as plain values: maps, lists,
// strings, int64, uint64, float64, bool, nil): nil for null, an int64, a
// string, or for the other types the name of the type as an Other, which
// no parameter takes.
func eval(prg cel.Program, object map[string]any) (any, error) {
	out, _, err := prg.Eval(map[string]any{"object": object})
	if err != nil {
		return nil, err
	}
	switch out.Type() {
	case types.NullType:
		return nil, nil
	case types.IntType:
		return int64(out.(types.Int)), nil
	case types.StringType:
		return string(out.(types.String)), nil
	}
	return Other(out.Type().TypeName()), nil
}

// Other is a result of a type no parameter takes, by its CEL type name.
type Other string

// checkedAST decodes a checked AST as CompileChecked encodes it.
func checkedAST(b64 string) (*cel.Ast, bool) {
	if b64 == "" {
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

// CompileChecked compiles text and returns its checked AST, base64 of a
// CheckedExpr, as Compile takes it (the test that keeps podexpr's
// precompiled expressions current calls it).
func CompileChecked(text string) (string, error) {
	e, err := env()
	if err != nil {
		return "", err
	}
	ast, iss := e.Compile(text)
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
