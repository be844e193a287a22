package rollout

import (
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
)

// The tests run the core in the process and evaluate expressions with
// cel-go there, as kinject-live does (inject-fn and kubectl-inject run
// kinject-cel).
func init() { podexpr.Use(celgo.Compile) }
