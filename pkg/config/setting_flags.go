package config

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/kinject/kubectl-inject/pkg/inject"
)

// This file holds the flags that set one setting of the schema each, and
// how they are declared from the schema; Flags.completeSettings decodes
// the ones given.

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
