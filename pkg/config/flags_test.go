package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// parsedFlags returns Flags parsed from args and completed, as a command
// does.
func parsedFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	f := NewFlags()
	fs := pflag.NewFlagSet("inject", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	f.Complete(fs)
	return &f
}

// TestSettingFlagsNameSettings: every flag of the table is registered
// (policy's --namespaces by policy alone) and names a setting of the
// schema, and every setting a flag could set is in the table or listed
// here with why it is not.
func TestSettingFlagsNameSettings(t *testing.T) {
	f := NewFlags()
	fs := pflag.NewFlagSet("inject", pflag.ContinueOnError)
	f.AddFlags(fs)
	covered := map[string]bool{}
	for _, sf := range settingFlags {
		if registered := fs.Lookup(sf.flag) != nil; registered != (sf.flag != "namespaces") {
			t.Errorf("--%s: registered by AddFlags %v", sf.flag, registered)
		}
		if name, ok := inject.SettingName(sf.setting); !ok || name != sf.setting {
			t.Errorf("--%s sets %q, which is not a setting's name", sf.flag, sf.setting)
		}
		covered[sf.setting] = true
	}
	notFlags := map[string]string{
		"profile":           "--profile is checked against the template's spec.profile (applyProfile)",
		"selector":          "-l selects live objects; it is the selector setting with --local only (completeSettings)",
		"allProfiles":       "--all-profiles is checked against --uninject and --profile (applyProfile)",
		"templateConfigMap": "--template-configmap is a template source, resolved before the settings",
		"apiGroups":         "no flag: set in a template file",
	}
	for _, name := range inject.SettingNames() {
		if !covered[name] && notFlags[name] == "" {
			t.Errorf("setting %q has no flag and no reason listed", name)
		}
	}
}

// TestTemplateFlagsOverride: a flag given overrides the template file's
// setting whatever its value; a flag not given leaves it.
func TestTemplateFlagsOverride(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(template, []byte(`apiVersion: kinject.dev/v1alpha1
kind: SidecarInjection
metadata: {name: t}
spec:
  mode: opt-in
  kinds: [Deployment]
  injectHostNetwork: true
  native: true
  strict: true
`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := parsedFlags(t, "--template", template, "--inject-host-network=false", "--strict=false", "--kinds", "Job,CronJob", "--pod-template-path", "Rollout.argoproj.io=spec.template")
	if errs := f.ValidateTemplateFlags(); len(errs) > 0 {
		t.Fatal(errs)
	}
	_, s, err := f.LoadTemplate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Policy.InjectHostNetwork || s.Strict {
		t.Errorf("--inject-host-network=false and --strict=false did not override the template: %+v", s)
	}
	if !reflect.DeepEqual(s.Policy.Kinds, []string{"Job", "CronJob"}) {
		t.Errorf("kinds = %q, want the flag's", s.Policy.Kinds)
	}
	if s.Policy.Mode != inject.OptIn || s.Native == nil || !*s.Native {
		t.Errorf("settings no flag gave were changed: mode %q native %v", s.Policy.Mode, s.Native)
	}
	if len(s.PodTemplatePaths) != 1 || s.PodTemplatePaths[0].String() != "Rollout.argoproj.io=spec.template" {
		t.Errorf("podTemplatePaths = %v", s.PodTemplatePaths)
	}
}

// TestTemplateFlagErrors: a value the settings refuse is reported with the
// flag's name.
func TestTemplateFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "always"}, `--mode: "always" is not a mode (want opt-out or opt-in)`},
		{[]string{"--exclude-namespaces", "a,B"}, `--exclude-namespaces: namespace "B" is not a valid name`},
		{[]string{"--pod-template-path", "Rollout"}, `--pod-template-path: pod template path "Rollout": want Kind[.group]=field.path`},
		{[]string{"--local", "-f", "-", "-l", "app in (a"}, `--selector: "app in (a": unable to parse requirement`},
	} {
		f := parsedFlags(t, c.args...)
		var got []string
		for _, err := range f.ValidateTemplateFlags() {
			got = append(got, err.Error())
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
			t.Errorf("%q: errors %q, want one starting %q", c.args, got, c.want)
		}
	}
}

// TestSettingFlagsFromTheSchema: each setting flag is declared as its
// setting is in the schema: a boolean, a list or a string, with the
// setting's doc as its help.
func TestSettingFlagsFromTheSchema(t *testing.T) {
	fs := pflag.NewFlagSet("policy", pflag.ContinueOnError)
	for _, sf := range settingFlags {
		AddSettingFlag(fs, sf.flag, "")
	}
	docs := map[string]inject.SettingDoc{}
	for _, d := range inject.SettingDocs() {
		docs[d.Name] = d
	}
	wantType := map[inject.SettingKind]string{inject.TextSetting: "string", inject.BoolSetting: "bool", inject.ListSetting: "stringSlice"}
	for _, sf := range settingFlags {
		fl, d := fs.Lookup(sf.flag), docs[sf.setting]
		if got := fl.Value.Type(); got != wantType[d.Kind] {
			t.Errorf("--%s is a %s, its setting %s a %s", sf.flag, got, sf.setting, wantType[d.Kind])
		}
		if !strings.Contains(strings.ToLower(fl.Usage), strings.ToLower(d.Doc)) {
			t.Errorf("--%s's help %q lacks its setting's doc %q", sf.flag, fl.Usage, d.Doc)
		}
	}
	note := pflag.NewFlagSet("note", pflag.ContinueOnError)
	AddSettingFlag(note, "namespaces", "the policy's meaning")
	if got, want := note.Lookup("namespaces").Usage, "Inject only objects of these namespaces (an object without one counts as default); the policy's meaning (comma-separated, or the flag repeated)"; got != want {
		t.Errorf("--namespaces' help %q, want %q", got, want)
	}
}

// TestTemplateFileUninjectReach: a template file's allProfiles makes
// --uninject remove every profile, as --all-profiles does; without
// --uninject it changes nothing.
func TestTemplateFileUninjectReach(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(template, []byte("apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: t}\nspec: {allProfiles: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want inject.Op
	}{
		{[]string{"--template", template, "--uninject"}, inject.OpUninjectAll},
		{[]string{"--template", template}, inject.OpInject},
		{[]string{"--uninject"}, inject.OpUninject},
		{[]string{"--uninject", "--all-profiles"}, inject.OpUninjectAll},
	} {
		f := parsedFlags(t, c.args...)
		if _, _, err := f.LoadTemplate(nil); err != nil {
			t.Fatal(err)
		}
		if got := f.Op(); got != c.want {
			t.Errorf("%q: op %v, want %v", c.args, got, c.want)
		}
	}
}
