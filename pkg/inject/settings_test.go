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

// TestSettingsDefault: the injector runs with the defaults filled in
// (Settings), and the document it writes keeps the settings as given.
func TestSettingsDefault(t *testing.T) {
	if got := (inject.Settings{}).Default().Policy.Mode; got != inject.OptOut {
		t.Errorf("the default mode is %q, want %q", got, inject.OptOut)
	}
	if got := (inject.Settings{Policy: inject.Policy{Mode: inject.OptIn}}).Default().Policy.Mode; got != inject.OptIn {
		t.Errorf("Default replaced a mode given: %q", got)
	}
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Settings().Policy.Mode; got != inject.OptOut {
		t.Errorf("the injector runs with mode %q, want %q", got, inject.OptOut)
	}
	doc, err := in.Document()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "mode") {
		t.Errorf("the document writes a default the user did not give: %s", doc)
	}
}
