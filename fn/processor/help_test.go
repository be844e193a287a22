package processor_test

import (
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/fn/processor"
	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// TestHelpListsEverySetting: inject-fn --help names every setting of the
// schema with its doc, and the keys the function reads itself.
func TestHelpListsEverySetting(t *testing.T) {
	help := processor.Help()
	settings, _, ok := strings.Cut(help, "\nPROFILES\n")
	if !ok {
		t.Fatal("no PROFILES section")
	}
	for _, d := range inject.SettingDocs() {
		words := strings.Fields(d.Doc)
		if !strings.Contains(settings, "\n  "+d.Name+" ") || !strings.Contains(settings, words[len(words)-1]) {
			t.Errorf("--help's settings lack %s (%s)", d.Name, d.Doc)
		}
	}
	for _, key := range []string{config.UninjectKey, config.AdmissionPolicyKey} {
		if !strings.Contains(settings, "\n  "+key+" ") {
			t.Errorf("--help's settings lack %s", key)
		}
	}
	_, generated, _ := strings.Cut(settings, "\nSETTINGS")
	generated, _, _ = strings.Cut(generated, "\n  "+config.UninjectKey+" ")
	for _, line := range strings.Split(generated, "\n") {
		if len(line) > 80 {
			t.Errorf("a line of %d characters: %q", len(line), line)
		}
	}
}
