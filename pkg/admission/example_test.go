package admission_test

import (
	"fmt"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// Compile the embedded Envoy template into the objects to install.
func ExampleCompile() {
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{Policy: inject.Policy{Namespaces: []string{"shop"}}})
	if err != nil {
		panic(err)
	}
	p, err := admission.Compile(in, "")
	if err != nil {
		panic(err)
	}
	nodes, err := p.Nodes()
	if err != nil {
		panic(err)
	}
	for _, n := range nodes {
		fmt.Println(n.GetKind(), n.GetName())
	}
	// Output:
	// MutatingAdmissionPolicy kinject-envoy
	// MutatingAdmissionPolicyBinding kinject-envoy
	// ValidatingAdmissionPolicy kinject-envoy-conflicts
	// ValidatingAdmissionPolicyBinding kinject-envoy-conflicts
}
