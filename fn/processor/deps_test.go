package processor_test

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// TestNoClientGo keeps the function binary small and quick to start: the
// function and the core must not depend on k8s.io/client-go, nor on kyaml's
// fn/framework and the OpenAPI validation it imports.
func TestNoClientGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range testbin.GoListDeps(t, "github.com/kinject/kubectl-inject/fn/inject-fn", "github.com/kinject/kubectl-inject/pkg/inject") {
		if pkg == "k8s.io/client-go" || strings.HasPrefix(pkg, "k8s.io/client-go/") {
			t.Errorf("fn or pkg/inject depends on %s", pkg)
		}
		if slowInit(pkg) {
			t.Errorf("fn or pkg/inject depends on %s, whose package initializers slow down every start of inject-fn", pkg)
		}
	}
}

// slowInit reports the packages kyaml's fn/framework brought in (OpenAPI
// validation and go-openapi's formats), cel-go's (its standard library,
// type registry and protobuf descriptors, which kinject-cel links in
// inject-fn's place) and apimachinery's label selectors' (their
// validation's regular expressions and klog), which build tables when the
// program starts (GODEBUG=inittrace=1 inject-fn shows them).
func slowInit(pkg string) bool {
	for _, p := range []string{"sigs.k8s.io/kustomize/kyaml/fn/framework", "k8s.io/kube-openapi/pkg/validation/validate",
		"github.com/google/cel-go", "cel.dev/expr", "google.golang.org/genproto", "google.golang.org/protobuf/reflect/protodesc",
		"k8s.io/apimachinery/pkg/labels", "k8s.io/apimachinery/pkg/util/validation", "k8s.io/apimachinery/pkg/api/validate", "k8s.io/klog"} {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	// k8s.io/kube-openapi/pkg/validation/strfmt and its vendored
	// govalidator, or the go-openapi originals.
	return strings.Contains(pkg, "strfmt") || strings.Contains(pkg, "govalidator")
}
