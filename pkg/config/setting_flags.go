package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// This file holds the flags that set one setting of the schema each: how
// they are declared from the schema, and how the ones given are decoded
// and laid over a template's settings.

// settingFlags are the flags that set one setting each, and the
// setting's name in the schema (inject.Settings). Each is declared from
// the schema (AddSettingFlag): a boolean, a list or a string as the
// setting is, with the setting's doc as its help. A flag given overrides
// the template's setting, whatever its value (--inject-host-network=false
// too); the values are decoded and validated by the schema.
var settingFlags = []struct {
	flag, setting string
	// policyOnly: declared by policy and check alone (AddTemplateFlags
	// leaves it out).
	policyOnly bool
}{
	{"mode", "mode", false},
	{"kinds", "kinds", false},
	{"exclude-namespaces", "excludeNamespaces", false},
	{"native", "native", false},
	{"image", "image", false},
	{"pod-template-path", "podTemplatePaths", false},
	{"inject-host-network", "injectHostNetwork", false},
	{"strict", "strict", false},
	{"namespaces", "namespaces", true}, // the namespaces a policy injects
}

// AddSettingFlag declares the flag of settingFlags named flag on fs, as
// its setting is in the schema, with note (what more the flag means for
// the command, "" for nothing) after the setting's doc.
func AddSettingFlag(fs *pflag.FlagSet, flag, note string) {
	doc, ok := settingFlagDoc(flag)
	if !ok {
		panic("config: no setting for the flag --" + flag)
	}
	usage := strings.ToUpper(doc.Doc[:1]) + doc.Doc[1:]
	if note != "" {
		usage += "; " + note
	}
	switch doc.Kind {
	case inject.BoolSetting:
		fs.Bool(flag, false, usage)
	case inject.ListSetting:
		fs.StringSlice(flag, nil, usage+" (comma-separated, or the flag repeated)")
	default:
		fs.String(flag, "", usage)
	}
}

// settingFlagDoc is the schema's documentation of the setting flag sets.
func settingFlagDoc(flag string) (inject.SettingDoc, bool) {
	for _, sf := range settingFlags {
		if sf.flag != flag {
			continue
		}
		for _, d := range inject.SettingDocs() {
			if d.Name == sf.setting {
				return d, true
			}
		}
	}
	return inject.SettingDoc{}, false
}

// completeSettings decodes the template flags that were given into
// settings, with the settings' own schema and validation; --selector
// selects objects by label with --local only (live, it says which objects
// to read).
func (f *Flags) completeSettings(fs *pflag.FlagSet) {
	var pairs [][2]string
	flagOf := map[string]string{}
	f.given = nil
	add := func(flag, setting, value string) {
		pairs = append(pairs, [2]string{setting, value})
		flagOf[setting] = flag
		f.given = append(f.given, setting)
	}
	for _, sf := range settingFlags {
		fl := fs.Lookup(sf.flag)
		if fl == nil || !fl.Changed {
			continue
		}
		value := fl.Value.String()
		if list, ok := fl.Value.(pflag.SliceValue); ok {
			// A list setting takes one comma-separated string.
			value = strings.Join(list.GetSlice(), ",")
		}
		add(sf.flag, sf.setting, value)
	}
	if f.Local && f.Selector != "" {
		add("selector", "selector", f.Selector)
	}
	f.settings, f.settingsErr = inject.DecodeSettings(inject.FlatSettings(pairs), "")
	var fe *inject.FieldError
	if errors.As(f.settingsErr, &fe) {
		f.settingsErr = fmt.Errorf("--%s: %w", flagOf[fe.Field], fe.Err)
	}
}

// applySettings overlays the flags that were given on s.
func (f *Flags) applySettings(s *inject.Settings) error {
	if f.settingsErr != nil {
		return f.settingsErr
	}
	*s = s.Override(f.settings, f.given...)
	return nil
}
