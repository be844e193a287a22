package processor

import (
	"fmt"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// uninjectKey is the setting that turns the function into its inverse. It
// belongs to the front end, not to inject.Settings, so it is read here
// before the other settings are handed to the core.
const uninjectKey = "uninject"

// Config is a loaded function config: what to do and with which injector.
type Config struct {
	Op       inject.Op
	Injector *inject.Injector
}

// ConfigError is a function config that cannot be used. Field names the
// offending field when it is known.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("function config: %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("function config: %v", e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads a function config; see the package documentation for
// the forms it accepts. A nil or empty fc means the embedded default.
// lookup resolves template references, usually against the input items.
func LoadConfig(fc *yaml.RNode, lookup inject.ConfigMapLookup) (*Config, error) {
	var (
		cfg *inject.Config
		op  = inject.OpInject
		err error
	)
	switch kind := kindOf(fc); {
	case fc == nil || fc.IsNilOrEmpty():
		cfg = &inject.Config{}
	case kind == "ConfigMap":
		cfg, op, err = loadConfigMap(fc, lookup)
	case kind == inject.ConfigKind:
		cfg, op, err = loadSidecarInjection(fc, lookup)
	case kind == "" && fc.GetApiVersion() == "":
		// A bare partial Pod spec, as a hand-written config file may be.
		cfg, err = inject.LoadConfig(fc, lookup)
	default:
		return nil, &ConfigError{Field: "kind", Err: fmt.Errorf("%q (apiVersion %q) is not supported: use a %s %s, a ConfigMap or no config", kind, fc.GetApiVersion(), inject.ConfigAPIVersion, inject.ConfigKind)}
	}
	if err != nil {
		return nil, asConfigError(err)
	}
	if err := resolveTemplateConfigMap(cfg, lookup); err != nil {
		return nil, err
	}
	if cfg.Template == nil {
		cfg.Template = inject.DefaultTemplate()
	}
	in, err := inject.New(cfg.Template, cfg.Settings)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return &Config{Op: op, Injector: in}, nil
}

// loadConfigMap reads a ConfigMap of flat settings, with an optional
// template under data.config (the seed's envoy-initializer format).
func loadConfigMap(cm *yaml.RNode, lookup inject.ConfigMapLookup) (*inject.Config, inject.Op, error) {
	cfg := &inject.Config{}
	op := inject.OpInject
	data := cm.Field("data")
	if data == nil || data.Value.YNode().Kind != yaml.MappingNode {
		return cfg, op, nil
	}
	content := data.Value.YNode().Content
	for i := 0; i+1 < len(content); i += 2 {
		key, value := content[i].Value, content[i+1].Value
		field := "data." + key
		switch key {
		case inject.DefaultConfigKey:
			t, err := inject.TemplateFromConfigMap(cm, key)
			if err != nil {
				return nil, op, err
			}
			cfg.Template = t
		case uninjectKey:
			u, err := strconv.ParseBool(value)
			if err != nil {
				return nil, op, &ConfigError{Field: field, Err: fmt.Errorf("%q is not a boolean (want true or false)", value)}
			}
			op = opFor(u)
		default:
			if err := cfg.Settings.Set(key, value); err != nil {
				return nil, op, &ConfigError{Field: field, Err: err}
			}
		}
	}
	return cfg, op, nil
}

// loadSidecarInjection reads the typed config. spec.uninject is taken out
// of a copy before the core reads the rest.
func loadSidecarInjection(fc *yaml.RNode, lookup inject.ConfigMapLookup) (*inject.Config, inject.Op, error) {
	op := inject.OpInject
	doc := fc.Copy()
	if spec := doc.Field("spec"); spec != nil && spec.Value.YNode().Kind == yaml.MappingNode {
		if f := spec.Value.Field(uninjectKey); f != nil {
			v := f.Value.YNode()
			u, err := strconv.ParseBool(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil {
				return nil, op, &ConfigError{Field: "spec." + uninjectKey, Err: fmt.Errorf("must be true or false")}
			}
			op = opFor(u)
			if _, err := spec.Value.Pipe(yaml.Clear(uninjectKey)); err != nil {
				return nil, op, fmt.Errorf("removing spec.%s: %w", uninjectKey, err)
			}
		}
	}
	cfg, err := inject.LoadConfig(doc, lookup)
	return cfg, op, err
}

// resolveTemplateConfigMap loads the template named by the
// templateConfigMap setting.
func resolveTemplateConfigMap(cfg *inject.Config, lookup inject.ConfigMapLookup) error {
	name := cfg.Settings.TemplateConfigMap
	if name == "" {
		return nil
	}
	const field = "templateConfigMap"
	if cfg.Template != nil {
		return &ConfigError{Field: field, Err: fmt.Errorf("the config already holds a template: set one, not both")}
	}
	ref, err := inject.ParseTemplateRef(name)
	if err != nil {
		return &ConfigError{Field: field, Err: err}
	}
	t, err := inject.ResolveTemplateRef(ref, lookup)
	if err != nil {
		return &ConfigError{Field: field, Err: err}
	}
	cfg.Template = t
	return nil
}

func asConfigError(err error) error {
	if _, ok := err.(*ConfigError); ok {
		return err
	}
	return &ConfigError{Err: err}
}

func opFor(uninject bool) inject.Op {
	if uninject {
		return inject.OpUninject
	}
	return inject.OpInject
}

// kindOf reads the kind of a mapping node without failing on other nodes.
func kindOf(n *yaml.RNode) string {
	if n == nil || n.YNode() == nil || n.YNode().Kind != yaml.MappingNode {
		return ""
	}
	return n.GetKind()
}
