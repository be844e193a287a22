package expr_test

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/admission/expr"
)

// Build an expression; the constructors drop what does nothing.
func Example() {
	annotations := expr.Field(expr.Field(expr.Object, "metadata"), "annotations")
	optedOut := expr.Eq(expr.Index(annotations, expr.Str("sidecar.kinject.dev/inject")), expr.Str("false"))
	hostNetwork := false // a setting known when the policy is compiled
	skip := expr.Or(expr.Bool(hostNetwork), expr.And(expr.Has(expr.Field(expr.Object, "metadata"), "annotations"), optedOut))
	fmt.Println(expr.Text(skip))
	// A template's own CEL, embedded whole.
	fmt.Println(expr.Text(expr.Concat(expr.Str("port "), expr.Raw(`string(object.spec.containers[0].ports[0].containerPort)`))))
	// Output:
	// has(object.metadata.annotations) && object.metadata.annotations["sidecar.kinject.dev/inject"] == "false"
	// "port " + (string(object.spec.containers[0].ports[0].containerPort))
}
