package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
)

// ProfileUsage is the help of --profile, shared by every command that takes
// it.
const ProfileUsage = "Sidecar profile `NAME`: its status record, opt-in/out and override annotations are NAME.sidecar.kinject.dev/*, " +
	"so several sidecars are injected, upgraded, removed and reported on independently; a SidecarInjection's spec.profile, when set, " +
	"must agree (default: the default profile, sidecar.kinject.dev/*)"

// AddProfileFlag registers --profile on fs. The injection command, status
// and policy register it on their own flag sets, bound to the same field.
func (f *Flags) AddProfileFlag(fs *pflag.FlagSet) {
	fs.StringVar(&f.Profile, "profile", "", ProfileUsage)
}

// ValidateTemplateFlags checks the template flags (call it after
// Complete): the settings they set, by the settings' own validation;
// --profile, a name that cannot prefix an annotation; and --all-profiles
// outside --uninject or beside --profile, which would ask for one profile
// and every profile at once.
func (f *Flags) ValidateTemplateFlags() []error {
	var errs []error
	if f.settingsErr != nil {
		errs = append(errs, f.settingsErr)
	}
	if err := naming.ValidateProfile(f.Profile); err != nil {
		// The core says `profile "X": ...`; the flag's name goes in front.
		msg := err.Error()
		if !strings.HasPrefix(msg, "profile ") {
			msg = "profile: " + msg
		}
		errs = append(errs, errors.New("--"+msg))
	}
	if f.AllProfiles && !f.Uninject {
		errs = append(errs, errors.New("--all-profiles removes the injections of every profile; it needs --uninject"))
	}
	if f.AllProfiles && f.profileSet {
		errs = append(errs, errors.New("--all-profiles removes every profile; it cannot be combined with --profile"))
	}
	return errs
}

// declaredProfile is the profile a SidecarInjection template file sets in
// spec.profile, and where, for the message when --profile disagrees.
type declaredProfile struct {
	source  string
	profile string
}

// readDeclaredProfile returns the spec.profile of the file's configuring
// document when it is a SidecarInjection that sets one; nil otherwise. The
// file has been parsed successfully before, so a decoding error here only
// means there is nothing to find.
func readDeclaredProfile(path string, data []byte) *declaredProfile {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			return nil
		}
		// Empty documents are skipped as inject.ParseConfig skips them.
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" && doc.Content[0].Value == "" {
			continue
		}
		rn := yaml.NewRNode(&doc)
		if inject.ObjectKind(rn) != inject.ConfigKind {
			return nil
		}
		profile, err := rn.Pipe(yaml.Lookup("spec", "profile"))
		if err != nil || profile == nil {
			return nil
		}
		_, name := inject.ObjectName(rn)
		return &declaredProfile{
			source:  fmt.Sprintf("%s %q in %s", inject.ConfigKind, name, path),
			profile: yaml.GetValue(profile),
		}
	}
}

// applyProfile puts --profile and --all-profiles into s. --profile names
// the profile of a template that has no field for one (a template
// ConfigMap, a partial Pod spec, the embedded default, a SidecarInjection
// without spec.profile); a SidecarInjection that names another profile is
// an error rather than a silent choice, since the two would write
// different annotations.
func (f *Flags) applyProfile(s *inject.Settings, declared *declaredProfile) error {
	if !f.profileSet {
		return nil
	}
	if declared != nil && declared.profile != f.Profile {
		return fmt.Errorf("--profile %s and spec.profile %s of the template (%s) name different profiles: drop --profile, or give the same name",
			describeProfile(f.Profile), describeProfile(declared.profile), declared.source)
	}
	s.Profile = f.Profile
	return nil
}

// describeProfile quotes a profile name for messages; the default
// profile's empty name is spelled out.
func describeProfile(name string) string {
	if name == "" {
		return `"" (the default profile)`
	}
	return fmt.Sprintf("%q", name)
}

// ProfileGiven reports whether --profile was given.
func (f *Flags) ProfileGiven() bool { return f.profileSet }
