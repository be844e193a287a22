package admission_test

import (
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
)

// The tests evaluate expressions with cel-go in the process, as
// kinject-live does (inject-fn and kubectl-inject run kinject-cel).
func init() { podexpr.Use(celgo.Compile) }
