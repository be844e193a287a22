package inject

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/kinject/kubectl-inject/pkg/inject/template"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigMapLookup finds a ConfigMap by namespace and name, for templateRef.
// It returns nil, nil when there is no such ConfigMap.
type ConfigMapLookup func(namespace, name string) (*yaml.RNode, error)

// Config is a loaded configuration: the template and the settings.
type Config struct {
	Template *template.Template
	Settings Settings
	// Options are the document's options for the front end that reads
	// it (allProfiles, templateConfigMap).
	Options Options
}

// LoadConfig reads any document that configures injection: a
// SidecarInjection, a template ConfigMap (the seed's format), or a bare
// partial Pod spec. lookup resolves spec.templateRef and may be nil when
// references are not allowed.
func LoadConfig(doc *yaml.RNode, lookup ConfigMapLookup) (*Config, error) {
	if doc == nil || doc.IsNil() {
		return nil, fmt.Errorf("template: empty document")
	}
	node := nodes.ResolveDocument(doc.YNode())
	if node == nil || node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("template: must be a mapping (a ConfigMap, a SidecarInjection or a partial Pod spec)")
	}
	kind, apiVersion := nodes.ScalarField(node, "kind"), nodes.ScalarField(node, "apiVersion")
	switch {
	case kind == ConfigKind:
		if apiVersion != ConfigAPIVersion {
			return nil, fmt.Errorf("%s: apiVersion: %q is not supported (want %s)", kind, apiVersion, ConfigAPIVersion)
		}
		return loadSidecarInjection(node, lookup)
	case kind == "ConfigMap":
		t, err := TemplateFromConfigMap(doc, DefaultConfigKey)
		if err != nil {
			return nil, err
		}
		return &Config{Template: t}, nil
	case kind == "" && apiVersion == "":
		t, err := template.ParsePartialSpec(node, "")
		if err != nil {
			return nil, fmt.Errorf("template: %w", err)
		}
		return &Config{Template: t}, nil
	default:
		return nil, fmt.Errorf("template: kind %q (apiVersion %q) is not a template: use a ConfigMap, a %s %s or a partial Pod spec", kind, apiVersion, ConfigAPIVersion, ConfigKind)
	}
}

// TemplateFromConfigMap reads the template held in a ConfigMap's data under
// key (the seed's envoy-initializer format uses "config").
func TemplateFromConfigMap(cm *yaml.RNode, key string) (*template.Template, error) {
	if key == "" {
		key = DefaultConfigKey
	}
	_, name := ObjectName(cm)
	data := nodes.MapValue(nodes.ResolveDocument(cm.YNode()), "data")
	text := nodes.MapValue(data, key)
	if text == nil || text.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("ConfigMap %q: data.%s: is missing (a template ConfigMap holds a partial Pod spec under data.%s)", name, key, key)
	}
	parsed, err := yaml.Parse(text.Value)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %q: data.%s: not YAML: %w", name, key, err)
	}
	t, err := template.ParsePartialSpec(parsed.YNode(), "data."+key)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %q: %w", name, err)
	}
	t.Source = fmt.Sprintf("ConfigMap %q data.%s", name, key)
	return t, nil
}

func loadSidecarInjection(node *yaml.Node, lookup ConfigMapLookup) (*Config, error) {
	name := nodes.ScalarField(nodes.MapValue(node, "metadata"), "name")
	fail := func(err error) (*Config, error) {
		return nil, fmt.Errorf("%s %q: %w", ConfigKind, name, err)
	}
	spec := nodes.MapValue(node, "spec")
	if nodes.IsNull(spec) {
		return fail(fmt.Errorf("spec: is required"))
	}
	if spec.Kind != yaml.MappingNode {
		return fail(fmt.Errorf("spec: must be a mapping, not %s", nodes.DescribeNonObject(spec)))
	}
	cfg := &Config{}
	var ref *TemplateRef
	settings := nodes.NewMapping()
	for i := 0; i+1 < len(spec.Content); i += 2 {
		key, value := spec.Content[i].Value, spec.Content[i+1]
		field := "spec." + key
		switch key {
		case "template":
			t, err := template.ParsePartialSpec(value, field)
			if err != nil {
				return fail(err)
			}
			cfg.Template = t
		case "templateRef":
			r, err := parseTemplateRef(value, field)
			if err != nil {
				return fail(err)
			}
			ref = r
		default:
			settings.Content = append(settings.Content, spec.Content[i], value)
		}
	}
	s, o, err := DecodeSpec(settings, "spec", "template", "templateRef")
	if err != nil {
		return fail(err)
	}
	cfg.Settings, cfg.Options = s, o
	if cfg.Template != nil && ref != nil {
		return fail(fmt.Errorf("spec.template and spec.templateRef: set one, not both"))
	}
	if ref != nil {
		t, err := ResolveTemplateRef(*ref, lookup)
		if err != nil {
			return fail(fmt.Errorf("spec.templateRef: %w", err))
		}
		cfg.Template = t
	}
	return cfg, nil
}

func parseTemplateRef(value *yaml.Node, field string) (*TemplateRef, error) {
	if value.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping with name, and optionally namespace and key", field)
	}
	ref := &TemplateRef{Key: DefaultConfigKey}
	for i := 0; i+1 < len(value.Content); i += 2 {
		k, v := value.Content[i].Value, value.Content[i+1].Value
		switch k {
		case "name":
			ref.Name = v
		case "namespace":
			ref.Namespace = v
		case "key":
			ref.Key = v
		default:
			return nil, fmt.Errorf("%s.%s: unknown field (want name, namespace, key)", field, k)
		}
	}
	if ref.Name == "" {
		return nil, fmt.Errorf("%s.name: is required", field)
	}
	return ref, nil
}

// ResolveTemplateRef loads the template a reference points at.
func ResolveTemplateRef(ref TemplateRef, lookup ConfigMapLookup) (*template.Template, error) {
	if lookup == nil {
		return nil, fmt.Errorf("ConfigMap %q: references cannot be resolved here", ref.Name)
	}
	cm, err := lookup(ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %q: %w", ref.Name, err)
	}
	if cm == nil {
		return nil, fmt.Errorf("ConfigMap %q: not found", ref.Name)
	}
	return TemplateFromConfigMap(cm, ref.Key)
}

// ParseTemplate reads a template from YAML text in any supported format
// (a SidecarInjection with an inline template, a template ConfigMap, or a
// partial Pod spec). References to other ConfigMaps are not resolved here;
// use LoadConfig for that.
func ParseTemplate(data []byte) (*template.Template, error) {
	cfg, err := ParseConfig(data, nil)
	if err != nil {
		return nil, err
	}
	if cfg.Template == nil {
		return nil, fmt.Errorf("template: no template given")
	}
	return cfg.Template, nil
}

// ParseConfig reads a configuration file: its first document configures
// (see LoadConfig), and ConfigMaps among the later documents serve
// templateRef before lookup is asked (lookup may be nil).
func ParseConfig(data []byte, lookup ConfigMapLookup) (*Config, error) {
	docs, err := decodeDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("template: empty document")
	}
	return LoadConfig(docs[0], DocumentLookup(docs[1:], lookup))
}

// decodeDocuments parses every document of a stream that has content.
func decodeDocuments(data []byte) ([]*yaml.RNode, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.RNode
	for i := 0; ; i++ {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("not valid YAML: %w", err)
			}
			return nil, fmt.Errorf("document %d: not valid YAML: %w", i, err)
		}
		if len(node.Content) > 0 && !(nodes.IsNull(node.Content[0]) && node.Content[0].Value == "") {
			docs = append(docs, yaml.NewRNode(&node))
		}
	}
}

// DocumentLookup finds a ConfigMap by name among docs, then asks fallback
// (which may be nil). A ConfigMap without a namespace matches any
// namespace; two that match are an error rather than a guess.
func DocumentLookup(docs []*yaml.RNode, fallback ConfigMapLookup) ConfigMapLookup {
	return func(namespace, name string) (*yaml.RNode, error) {
		var found []*yaml.RNode
		for _, d := range docs {
			if ObjectKind(d) != "ConfigMap" {
				continue
			}
			ns, n := ObjectName(d)
			if n != name || namespace != "" && ns != "" && ns != namespace {
				continue
			}
			found = append(found, d)
		}
		switch {
		case len(found) == 1:
			return found[0], nil
		case len(found) > 1:
			return nil, fmt.Errorf("%d ConfigMaps named %q: name the namespace too (NAMESPACE/NAME)", len(found), name)
		case fallback != nil:
			return fallback(namespace, name)
		}
		return nil, nil
	}
}
