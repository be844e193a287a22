package config

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// UninjectKey is the setting that turns the function into its inverse. It
// belongs to the front end, not to inject.Settings, so it is read here
// before the other settings are handed to the core.
const UninjectKey = "uninject"

// AdmissionPolicyKey makes the function emit the admission policy (see
// pkg/admission) instead of injecting the items: a front-end setting too.
const AdmissionPolicyKey = "admissionPolicy"

// StaticAdmissionPolicyKey is AdmissionPolicyKey for the policy's static
// form: the objects an API server loads from its staticManifestsDir
// (pkg/admission CompileStatic), each in its own file.
const StaticAdmissionPolicyKey = "staticAdmissionPolicy"

// Function is a loaded function config (inject-fn's): what to do and with
// which injector.
type Function struct {
	Op       inject.Op
	Injector *inject.Injector
	// AllProfiles is the config's allProfiles: an uninject (the config's,
	// or inject-fn's --uninject) removes every profile's injection.
	AllProfiles bool
	// AdmissionPolicy, when set, asks for the admission policy objects
	// named after PolicyName; the items are then left as they are.
	AdmissionPolicy bool
	// StaticPolicy, with AdmissionPolicy, asks for its static form.
	StaticPolicy bool
	PolicyName   string
	// Source is the document the config was read from, nil for the
	// embedded default: results about the config point at it.
	Source *yaml.RNode
}

// FunctionError is a function config that cannot be used. Field names the
// offending field when it is known.
type FunctionError struct {
	Field string
	Err   error
}

func (e *FunctionError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("function config: %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("function config: %v", e.Err)
}

func (e *FunctionError) Unwrap() error { return e.Err }

// LoadFunction reads a function config: no config (the embedded
// default), a SidecarInjection, a ConfigMap of flat settings with an
// optional template under data.config, or a bare partial Pod spec. A nil or empty fc means the embedded default.
// lookup resolves template references, usually against the input items.
func LoadFunction(fc *yaml.RNode, lookup inject.ConfigMapLookup) (*Function, error) {
	var (
		cfg *inject.Config
		fe  frontEnd
		err error
	)
	switch kind := inject.ObjectKind(fc); {
	case fc == nil || fc.IsNilOrEmpty():
		cfg = &inject.Config{}
	case kind == "ConfigMap":
		cfg, fe, err = loadConfigMap(fc, lookup)
	case kind == inject.ConfigKind:
		cfg, fe, err = splitSidecarInjection(fc, lookup)
		fe.policyName = fc.GetName()
	case kind == "" && fc.GetApiVersion() == "":
		// A bare partial Pod spec, as a hand-written config file may be.
		cfg, err = inject.LoadConfig(fc, lookup)
	default:
		return nil, &FunctionError{Field: "kind", Err: fmt.Errorf("%q (apiVersion %q) is not supported: use a %s %s, a ConfigMap or no config", kind, fc.GetApiVersion(), inject.ConfigAPIVersion, inject.ConfigKind)}
	}
	if err != nil {
		return nil, asFunctionError(err)
	}
	if err := resolveTemplateConfigMap(cfg, lookup); err != nil {
		return nil, err
	}
	var in *inject.Injector
	if cfg.Template == nil {
		in, err = inject.NewDefault(cfg.Settings)
	} else {
		in, err = inject.New(cfg.Template, cfg.Settings)
	}
	if err != nil {
		return nil, &FunctionError{Err: err}
	}
	for key, set := range map[string]bool{AdmissionPolicyKey: fe.admissionPolicy, StaticAdmissionPolicyKey: fe.staticPolicy} {
		if set && fe.op == inject.OpUninject {
			return nil, &FunctionError{Field: key, Err: fmt.Errorf("cannot be combined with %s", UninjectKey)}
		}
	}
	if fe.op == inject.OpUninject {
		fe.op = inject.UninjectOp(cfg.Options.AllProfiles)
	}
	return &Function{Op: fe.op, AllProfiles: cfg.Options.AllProfiles, Injector: in, AdmissionPolicy: fe.admissionPolicy || fe.staticPolicy, StaticPolicy: fe.staticPolicy, PolicyName: fe.policyName, Source: fc}, nil
}

// frontEnd holds the settings the function reads itself.
type frontEnd struct {
	op              inject.Op
	admissionPolicy bool
	staticPolicy    bool
	policyName      string
}

// set reads one front-end setting, reporting whether key is one.
func (fe *frontEnd) set(key, value, field string) (bool, error) {
	var target *bool
	var uninject bool
	switch key {
	case UninjectKey:
		target = &uninject
	case AdmissionPolicyKey:
		target = &fe.admissionPolicy
	case StaticAdmissionPolicyKey:
		target = &fe.staticPolicy
	default:
		return false, nil
	}
	b, err := strconv.ParseBool(value)
	if err != nil {
		return true, &FunctionError{Field: field, Err: fmt.Errorf("%q is not a boolean (want true or false)", value)}
	}
	*target = b
	if key == UninjectKey {
		fe.op = opFor(uninject)
	}
	return true, nil
}

// loadConfigMap reads a ConfigMap of flat settings, with an optional
// template under data.config (the seed's envoy-initializer format).
func loadConfigMap(cm *yaml.RNode, lookup inject.ConfigMapLookup) (*inject.Config, frontEnd, error) {
	cfg := &inject.Config{}
	var fe frontEnd
	data := cm.Field("data")
	if data == nil || data.Value.YNode().Kind != yaml.MappingNode {
		return cfg, fe, nil
	}
	content := data.Value.YNode().Content
	var settings [][2]string
	for i := 0; i+1 < len(content); i += 2 {
		key, value := content[i].Value, content[i+1].Value
		field := "data." + key
		if known, err := fe.set(key, value, field); known {
			if err != nil {
				return nil, fe, err
			}
			continue
		}
		if key == inject.DefaultConfigKey {
			t, err := inject.TemplateFromConfigMap(cm, key)
			if err != nil {
				return nil, fe, err
			}
			cfg.Template = t
			continue
		}
		settings = append(settings, [2]string{key, value})
	}
	s, o, err := inject.DecodeSpec(inject.FlatSettings(settings), "data", UninjectKey, AdmissionPolicyKey, StaticAdmissionPolicyKey, inject.DefaultConfigKey)
	if fieldErr := (*inject.FieldError)(nil); errors.As(err, &fieldErr) {
		return nil, fe, &FunctionError{Field: fieldErr.Field, Err: fieldErr.Err}
	}
	if err != nil {
		return nil, fe, &FunctionError{Err: err}
	}
	cfg.Settings, cfg.Options = s, o
	return cfg, fe, nil
}

// splitSidecarInjection reads the typed config, split between the
// function's own options and the core's: spec.uninject,
// spec.admissionPolicy and spec.staticAdmissionPolicy are taken out of a copy before the core reads the
// rest.
func splitSidecarInjection(fc *yaml.RNode, lookup inject.ConfigMapLookup) (*inject.Config, frontEnd, error) {
	var fe frontEnd
	doc := fc.Copy()
	if spec := doc.Field("spec"); spec != nil && spec.Value.YNode().Kind == yaml.MappingNode {
		for _, key := range []string{UninjectKey, AdmissionPolicyKey, StaticAdmissionPolicyKey} {
			f := spec.Value.Field(key)
			if f == nil {
				continue
			}
			v := f.Value.YNode()
			if _, err := fe.set(key, v.Value, "spec."+key); err != nil || v.Kind != yaml.ScalarNode {
				return nil, fe, &FunctionError{Field: "spec." + key, Err: fmt.Errorf("must be true or false")}
			}
			if _, err := spec.Value.Pipe(yaml.Clear(key)); err != nil {
				return nil, fe, fmt.Errorf("removing spec.%s: %w", key, err)
			}
		}
	}
	cfg, err := inject.LoadConfig(doc, lookup)
	return cfg, fe, err
}

// resolveTemplateConfigMap loads the template named by the
// templateConfigMap setting.
func resolveTemplateConfigMap(cfg *inject.Config, lookup inject.ConfigMapLookup) error {
	name := cfg.Options.TemplateConfigMap
	if name == "" {
		return nil
	}
	const field = "templateConfigMap"
	if cfg.Template != nil {
		return &FunctionError{Field: field, Err: fmt.Errorf("the config already holds a template: set one, not both")}
	}
	t, err := templateFromConfigMap(name, lookup)
	if err != nil {
		return &FunctionError{Field: field, Err: err}
	}
	cfg.Template = t
	return nil
}

func asFunctionError(err error) error {
	if _, ok := err.(*FunctionError); ok {
		return err
	}
	return &FunctionError{Err: err}
}

func opFor(uninject bool) inject.Op {
	if uninject {
		return inject.OpUninject
	}
	return inject.OpInject
}
