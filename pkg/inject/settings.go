package inject

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Mode chooses which objects are injected by default.
type Mode string

// Modes.
const (
	// OptOut injects every selected object unless it is annotated
	// sidecar.kinject.dev/inject: "false".
	OptOut Mode = "opt-out"
	// OptIn injects only objects annotated sidecar.kinject.dev/inject: "true"
	// (or the seed's initializer.kubernetes.io/envoy: "true").
	OptIn Mode = "opt-in"
)

// The typed configuration document, SidecarInjection.
const (
	ConfigAPIVersion = "kinject.dev/v1alpha1"
	ConfigKind       = "SidecarInjection"
	// DefaultConfigKey is the ConfigMap key holding a template, as in the
	// seed's envoy-initializer ConfigMap.
	DefaultConfigKey = "config"
)

// SidecarInjection is the typed configuration document. Its spec holds the
// settings and, in YAML only, the template (spec.template, a partial Pod
// spec kept as written, or spec.templateRef): LoadConfig reads it,
// Injector.Document writes it.
type SidecarInjection struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       Settings   `json:"spec"`
}

// ObjectMeta is the part of a document's metadata the configuration reads.
type ObjectMeta struct {
	Name string `json:"name"`
}

// Settings are everything besides the template: which objects to inject
// and how. It is the one schema of the settings: a SidecarInjection's spec,
// a ConfigMap of flat settings (kpt fn eval's key=value arguments) and the
// command line's template flags are all decoded into it (DecodeSettings),
// and the SidecarInjection an admission policy carries is it, marshalled
// (Injector.Document). Its JSON names are the settings' names everywhere;
// the order of its fields is the order a document lists them in; each
// field's doc tag is its line in the documentation and in inject-fn --help
// (SettingDocs).
type Settings struct {
	// Profile names the sidecar profile: its status record and annotations
	// are NAME.sidecar.kinject.dev/*. "" is the default profile
	// (sidecar.kinject.dev/*).
	Profile string `json:"profile,omitempty" doc:"the sidecar profile: its record and annotations are NAME.sidecar.kinject.dev/* (default: the default profile, sidecar.kinject.dev/*)"`
	Policy
	// Strict makes the template's privilege warnings errors.
	Strict bool `json:"strict,omitempty" doc:"refuse a template that widens privileges (privileged, added capabilities, root, hostPath) instead of warning"`
	// PodTemplatePaths adds pod-template locations for kinds the injector
	// does not know.
	PodTemplatePaths []PodTemplatePath `json:"podTemplatePaths,omitempty" doc:"where a custom kind keeps its pod template: Kind[.group]=field.path (Rollout.argoproj.io=spec.template)"`
	// Image, when set, replaces the image of the template's first sidecar.
	Image string `json:"image,omitempty" doc:"replaces the image of the template's first sidecar"`
	// Native, when set, moves the template's sidecars to native form (true)
	// or to classic containers (false).
	Native *bool `json:"native,omitempty" doc:"true moves the template's sidecars to native sidecars (init containers with restartPolicy: Always), false to classic containers, for Kubernetes 1.28 and older (refused for Pods that run to completion); unset keeps the template's (the embedded default's are native)"`
}

// Options are the settings of a configuration document that say how a
// front end runs rather than what is injected: where the template comes
// from, and how far uninject reaches. They share the document's schema
// with Settings (SettingDocs lists both) but are not an injector's: the
// front ends read them (uninject's reach as OpUninjectAll).
type Options struct {
	// AllProfiles makes uninject remove every profile's injection.
	AllProfiles bool `json:"allProfiles,omitempty" doc:"with uninject: remove every profile's injection"`
	// TemplateConfigMap names a ConfigMap holding the template
	// ("[NAMESPACE/]NAME[:KEY]"); front ends resolve it.
	TemplateConfigMap string `json:"templateConfigMap,omitempty" doc:"read the template from a ConfigMap: [NAMESPACE/]NAME[:KEY] (key default: config)"`
}

// spec is the schema of a configuration document's settings: what is
// injected, then the front ends' options.
type spec struct {
	Settings
	Options
}

// The fields of spec, first in a schema field's index.
const (
	settingsIndex = 0
	optionsIndex  = 1
)

// Validate checks the options; the error is a *FieldError.
func (o Options) Validate() error {
	if ref := o.TemplateConfigMap; ref != "" {
		if _, err := ParseTemplateRef(ref); err != nil {
			return &FieldError{Field: "templateConfigMap", Err: err}
		}
	}
	return nil
}

// Policy selects the objects to inject.
type Policy struct {
	Mode Mode `json:"mode,omitempty" doc:"opt-out (default: inject unless annotated sidecar.kinject.dev/inject: \"false\", NAME.sidecar.kinject.dev/inject for the profile NAME) or opt-in (only what is annotated \"true\")"`
	// Kinds limits injection to these kinds (case-insensitive); empty means all
	// kinds that have a pod template.
	Kinds []string `json:"kinds,omitempty" doc:"inject only these kinds (without case; default: every kind with a pod template)"`
	// APIGroups limits injection to these API groups ("" or "core" for v1).
	APIGroups []string `json:"apiGroups,omitempty" doc:"inject only kinds of these API groups (\"\" or core for v1)"`
	// Namespaces limits injection to these namespaces; an object without a
	// namespace counts as "default".
	Namespaces []string `json:"namespaces,omitempty" doc:"inject only objects of these namespaces (an object without one counts as default)"`
	// ExcludeNamespaces leaves these namespaces out, whatever else selects
	// them.
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty" doc:"leave these namespaces alone, whatever else selects them (skipped: namespace_not_selected)"`
	// Selector is a label selector on the object's labels.
	Selector string `json:"selector,omitempty" doc:"inject only objects whose labels match this label selector"`
	// InjectHostNetwork injects pods that use the host's network too.
	InjectHostNetwork bool `json:"injectHostNetwork,omitempty" doc:"inject Pods that use the host's network too (a sidecar there shares the node's ports)"`
}

// TemplateRef names a ConfigMap key holding a template.
type TemplateRef struct {
	Namespace, Name, Key string
}

// ParseTemplateRef reads "[NAMESPACE/]NAME[:KEY]".
func ParseTemplateRef(s string) (TemplateRef, error) {
	ref := TemplateRef{Key: DefaultConfigKey}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s, ref.Key = s[:i], s[i+1:]
	}
	if i := strings.Index(s, "/"); i >= 0 {
		ref.Namespace, s = s[:i], s[i+1:]
	}
	ref.Name = s
	if ref.Name == "" || ref.Key == "" {
		return ref, fmt.Errorf("template ConfigMap reference %q: want [NAMESPACE/]NAME[:KEY]", s)
	}
	return ref, nil
}

// FieldError is a setting that cannot be used, named by its JSON name
// ("mode"; with DecodeSettings, as the mapping spelled it under its at:
// "spec.mode", "data.inject-host-network"), so that each front end can
// say where it came from (spec.mode, data.mode, --mode).
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Default returns the settings with every unset field that has a default
// set to it: what the injector runs with. The document an admission policy
// carries keeps the settings as given.
func (s Settings) Default() Settings {
	if s.Policy.Mode == "" {
		s.Policy.Mode = OptOut
	}
	return s
}

// Validate checks the settings before any object is seen; the error is a
// *FieldError naming the first setting that cannot be used.
func (s Settings) Validate() error {
	fail := func(field string, err error) error { return &FieldError{Field: field, Err: err} }
	if m := s.Policy.Mode; m != "" && m != OptIn && m != OptOut {
		return fail("mode", fmt.Errorf("%q is not a mode (want %s or %s)", m, OptOut, OptIn))
	}
	for _, list := range []struct {
		field string
		names []string
	}{{"namespaces", s.Policy.Namespaces}, {"excludeNamespaces", s.Policy.ExcludeNamespaces}} {
		for _, ns := range list.names {
			if err := ValidateNamespace(ns); err != nil {
				return fail(list.field, err)
			}
		}
	}
	if sel := s.Policy.Selector; sel != "" {
		if _, err := yaml.NewMapRNode(&map[string]string{}).MatchesLabelSelector(sel); err != nil {
			return fail("selector", fmt.Errorf("%q: %w", sel, err))
		}
	}
	if err := naming.ValidateProfile(s.Profile); err != nil {
		return fail("profile", err)
	}
	return nil
}

// DecodeSettings decodes a mapping of settings (a SidecarInjection's spec
// less its template, a ConfigMap's data) strictly into Settings, then
// validates them. Keys may be spelled "injectHostNetwork",
// "inject-host-network" or "inject_host_network"; a boolean may be given as
// the string "true", a list as a comma-separated string, as flat
// key=value settings give them. at names the mapping in errors ("spec",
// "data"); every error names the field, as a *FieldError where it is one
// setting's. also lists the keys beside the settings that the caller has
// taken out of m (spec.template), for the message about an unknown one.
func DecodeSettings(m *yaml.Node, at string, also ...string) (Settings, error) {
	s, o, err := DecodeSpec(m, at, also...)
	if err == nil && o != (Options{}) {
		for _, f := range settingFields().fields {
			if f.index[0] == optionsIndex && !reflect.ValueOf(o).FieldByIndex(f.index[1:]).IsZero() {
				return s, &FieldError{Field: nodes.JoinField(at, f.name), Err: fmt.Errorf("is a front end's option, not a setting of what is injected")}
			}
		}
	}
	return s, err
}

// DecodeSpec is DecodeSettings of a configuration document's whole
// spec: the settings, and the front ends' options beside them.
func DecodeSpec(m *yaml.Node, at string, also ...string) (Settings, Options, error) {
	var s spec
	if m == nil || nodes.IsNull(m) {
		return s.Settings, s.Options, nil
	}
	if m.Kind != yaml.MappingNode {
		return s.Settings, s.Options, fmt.Errorf("%s: must be a mapping, not %s", at, nodes.DescribeNonObject(m))
	}
	if len(m.Content) == 0 {
		return s.Settings, s.Options, nil // nothing to decode: every run without settings starts here
	}
	fields := settingFields()
	canonical := nodes.NewMapping()
	given := map[string]string{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i].Value, m.Content[i+1]
		f, ok := fields.byKey[settingKey(key)]
		if !ok {
			known := append(append([]string(nil), fields.names...), also...)
			return s.Settings, s.Options, &FieldError{Field: nodes.JoinField(at, key), Err: fmt.Errorf("unknown setting %q (known: %s)", key, strings.Join(known, ", "))}
		}
		if first, twice := given[f.name]; twice {
			return s.Settings, s.Options, &FieldError{Field: nodes.JoinField(at, key), Err: fmt.Errorf("%s is set already (as %s): set it once", f.name, nodes.JoinField(at, first))}
		}
		given[f.name] = key
		v, err := f.coerce(value)
		if err != nil {
			return s.Settings, s.Options, &FieldError{Field: nodes.JoinField(at, key), Err: err}
		}
		canonical.Content = append(canonical.Content, nodes.NewString(f.name), v)
	}
	data, err := yaml.Marshal(canonical)
	if err != nil {
		return s.Settings, s.Options, fmt.Errorf("%s: %w", at, err)
	}
	if err := sigsyaml.UnmarshalStrict(data, &s); err != nil {
		return s.Settings, s.Options, fmt.Errorf("%s: %s", at, strings.TrimPrefix(err.Error(), "error converting YAML to JSON: yaml: "))
	}
	err = s.Settings.Validate()
	if err == nil {
		err = s.Options.Validate()
	}
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return s.Settings, s.Options, &FieldError{Field: nodes.JoinField(at, fe.Field), Err: fe.Err}
		}
		return s.Settings, s.Options, err
	}
	return s.Settings, s.Options, nil
}

// Override returns s with the named settings (as SettingNames names them)
// taken from o, whatever their values: how the command line's flags go
// over a template file's settings (--inject-host-network=false included).
func (s Settings) Override(o Settings, names ...string) Settings {
	fields := settingFields()
	to, from := reflect.ValueOf(&s).Elem(), reflect.ValueOf(o)
	for _, name := range names {
		f, ok := fields.byKey[settingKey(name)]
		if !ok || f.index[0] != settingsIndex {
			panic(fmt.Sprintf("settings: Override of an unknown setting %q", name))
		}
		to.FieldByIndex(f.index[1:]).Set(from.FieldByIndex(f.index[1:]))
	}
	return s
}

// SettingDoc documents one setting: its name, the values it takes and
// what it does (its doc tag).
type SettingDoc struct {
	Name, Value, Doc string
	Kind             SettingKind
}

// SettingKind is the kind of value a setting takes: what a command-line
// flag that sets it is.
type SettingKind int

// The kinds of settings.
const (
	TextSetting SettingKind = iota // a string
	BoolSetting                    // true or false
	ListSetting                    // a list of strings
)

// SettingDocs documents every setting, in the schema's order: the
// documentation's table and inject-fn --help are written from it.
func SettingDocs() []SettingDoc {
	var out []SettingDoc
	for _, f := range settingFields().fields {
		value, kind := "a string", TextSetting
		switch f.shape {
		case flagSetting:
			value, kind = "true or false", BoolSetting
		case listSetting:
			value, kind = "a list (or one comma-separated string)", ListSetting
		}
		out = append(out, SettingDoc{Name: f.name, Value: value, Doc: f.doc, Kind: kind})
	}
	return out
}

// SettingsMarkdown is the table of settings as the documentation shows
// it.
func SettingsMarkdown() string {
	var b strings.Builder
	b.WriteString("| setting | value | what it does |\n| --- | --- | --- |\n")
	for _, d := range SettingDocs() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", d.Name, d.Value, d.Doc)
	}
	return b.String()
}

// SettingNames returns the settings' names in the order of the schema.
func SettingNames() []string { return append([]string(nil), settingFields().names...) }

// SettingName returns the schema's name of a setting spelled any way
// DecodeSettings accepts ("inject-host-network" is "injectHostNetwork"),
// and whether there is such a setting.
func SettingName(key string) (string, bool) {
	f, ok := settingFields().byKey[settingKey(key)]
	return f.name, ok
}

// settingKey folds "inject-host-network", "injectHostNetwork" and
// "inject_host_network" into one spelling.
func settingKey(key string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(key))
}

// settingShape is what a setting's YAML value must be.
type settingShape int

const (
	textSetting settingShape = iota // a string
	flagSetting                     // a boolean, or the string "true"/"false"
	listSetting                     // a list of strings, or one comma-separated string
)

// settingField is one field of the schema, read from Settings' JSON tags.
type settingField struct {
	name  string
	doc   string
	index []int // of the field in spec (settingsIndex or optionsIndex first)
	shape settingShape
	// item parses one list item when the items are typed (a
	// PodTemplatePath): the error then names the item.
	item func(string) error
}

type settingSchema struct {
	byKey  map[string]settingField
	names  []string
	fields []settingField // in the schema's order
}

// settingFields reads the schema from Settings once, on first use.
var settingFields = sync.OnceValue(func() settingSchema {
	schema := settingSchema{byKey: map[string]settingField{}}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			at := append(slices.Clip(index), i)
			if sf.Anonymous {
				walk(sf.Type, at)
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			f := settingField{name: name, index: at, doc: sf.Tag.Get("doc")}
			switch typ := sf.Type; {
			case typ.Kind() == reflect.Bool, typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Bool:
				f.shape = flagSetting
			case typ.Kind() == reflect.Slice:
				f.shape = listSetting
				if elem := reflect.PointerTo(typ.Elem()); elem.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
					f.item = func(s string) error {
						return reflect.New(typ.Elem()).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
					}
				}
			case typ.Kind() == reflect.String:
				f.shape = textSetting
			default:
				panic(fmt.Sprintf("settings: field %s has no shape", sf.Name))
			}
			schema.byKey[settingKey(name)] = f
			schema.names = append(schema.names, name)
			schema.fields = append(schema.fields, f)
		}
	}
	walk(reflect.TypeFor[spec](), nil)
	return schema
})

// coerce returns value in the form the field's JSON type takes, or an
// error saying what the field must be.
func (f settingField) coerce(value *yaml.Node) (*yaml.Node, error) {
	switch f.shape {
	case flagSetting:
		if value.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("must be true or false")
		}
		b, err := strconv.ParseBool(value.Value)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean (want true or false)", value.Value)
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}, nil
	case listSetting:
		var items []string
		switch value.Kind {
		case yaml.ScalarNode:
			items = splitList(value.Value)
		case yaml.SequenceNode:
			for _, n := range value.Content {
				if n.Kind != yaml.ScalarNode {
					return nil, fmt.Errorf("must be a list of strings")
				}
				items = append(items, n.Value)
			}
		default:
			return nil, fmt.Errorf("must be a list of strings or a comma-separated string")
		}
		seq := nodes.NewSequence()
		for _, item := range items {
			if f.item != nil {
				if err := f.item(item); err != nil {
					return nil, err
				}
			}
			seq.Content = append(seq.Content, nodes.NewString(item))
		}
		return seq, nil
	default:
		if value.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("must be a string")
		}
		return nodes.NewString(value.Value), nil
	}
}

// FlatSettings is a mapping of key: value strings (a ConfigMap's data,
// kpt fn eval's arguments) as a node DecodeSettings reads.
func FlatSettings(pairs [][2]string) *yaml.Node {
	m := nodes.NewMapping()
	for _, kv := range pairs {
		m.Content = append(m.Content, nodes.NewString(kv[0]), nodes.NewString(kv[1]))
	}
	return m
}

func splitList(value string) []string {
	var out []string
	for _, v := range strings.Split(value, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
