package inject_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

const (
	settingsDoc   = "../../docs/templates.md"
	settingsBegin = "<!-- settings: begin -->\n"
	settingsEnd   = "<!-- settings: end -->\n"
)

// TestSettingsDocumented fails when the documentation's table of settings
// is not the one the schema generates (every setting with its doc tag);
// -update rewrites it.
func TestSettingsDocumented(t *testing.T) {
	doc, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), settingsBegin)
	table, after, ok2 := strings.Cut(rest, settingsEnd)
	if !ok || !ok2 {
		t.Fatalf("%s: no %q ... %q", settingsDoc, settingsBegin, settingsEnd)
	}
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
	if table == want {
		return
	}
	if *update {
		if err := os.WriteFile(settingsDoc, []byte(before+settingsBegin+want+settingsEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the table of settings differs from the schema's (go test ./pkg/inject -run TestSettingsDocumented -update):\n%s\nwant:\n%s", settingsDoc, table, want)
}
