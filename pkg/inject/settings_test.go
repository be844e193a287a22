package inject_test

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestSettingsDocumented fails when docs/templates.md's table of settings
// is not the one the schema generates (every setting with its doc tag);
// -update rewrites it.
func TestSettingsDocumented(t *testing.T) {
	want := inject.SettingsMarkdown()
	for _, name := range inject.SettingNames() {
		if !strings.Contains(want, "| `"+name+"` |") {
			t.Errorf("setting %s: no row", name)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n")[2:] {
		if strings.HasSuffix(line, "|  |") {
			t.Errorf("a setting without its doc tag: %s", line)
		}
	}
	mddoc.Generated(t, "docs/templates.md", "settings", want, *update, "go test ./pkg/inject -run TestSettingsDocumented -update")
}
