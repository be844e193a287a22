package processor_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoClientGo keeps the function binary small and quick to start: the
// function and the core must not depend on k8s.io/client-go.
func TestNoClientGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps",
		"github.com/kinject/kubectl-inject/fn",
		"github.com/kinject/kubectl-inject/pkg/inject").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "k8s.io/client-go" || strings.HasPrefix(pkg, "k8s.io/client-go/") {
			t.Errorf("fn or pkg/inject depends on %s", pkg)
		}
	}
}
