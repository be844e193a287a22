package config_test

import (
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// TestFrontEndsDoNotImportEachOther: the full command (plugin/cmd) and the
// function (fn/processor) take their configuration from this package, not
// from the --local front end; only the main packages wire plugin/local in.
func TestFrontEndsDoNotImportEachOther(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{
		"github.com/kinject/kubectl-inject/plugin/cmd",
		"github.com/kinject/kubectl-inject/fn/processor",
		"github.com/kinject/kubectl-inject/pkg/config",
	} {
		for _, dep := range testbin.GoListDeps(t, pkg) {
			if dep == "github.com/kinject/kubectl-inject/plugin/local" || dep == "github.com/kinject/kubectl-inject/plugin/cmd" && pkg != dep {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
