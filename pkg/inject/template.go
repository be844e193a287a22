package inject

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/nodes"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/pkg/yamltext"
)

// Template is a partial Pod spec: what gets injected. Containers and volumes
// keep the template's own YAML nodes so they are written as the template
// author wrote them.
type Template struct {
	Containers     []*yaml.Node
	InitContainers []*yaml.Node
	Volumes        []*yaml.Node
	// Labels and Annotations are added to the pod template's metadata.
	Labels      []KeyValue
	Annotations []KeyValue
	// Parameters are the fields a workload may override by annotation.
	Parameters []Parameter
	// ReservedPorts are ports the sidecars bind without declaring them
	// (loopback listeners such as an admin API): no app may use them.
	ReservedPorts []ReservedPort
	ports         []SidecarPort // SidecarPorts, listed when parsed
	// Source says where the template came from, for messages.
	Source string
}

// KeyValue is one label or annotation, kept in template order.
type KeyValue struct {
	Key, Value string
}

// partialSpecFields are the fields a partial Pod spec may hold.
var partialSpecFields = map[string]bool{
	"containers": true, "initContainers": true, "volumes": true, "metadata": true, "parameters": true,
	"reservedPorts": true,
}

// parsePartialSpec reads a partial Pod spec mapping (containers,
// initContainers, volumes, metadata) into a Template. where prefixes field
// paths in errors ("data.config", "spec.template").
func parsePartialSpec(node *yaml.Node, where string) (*Template, error) {
	node = nodes.ResolveDocument(node)
	if node == nil || node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping with containers, initContainers, volumes or metadata", where)
	}
	t := &Template{Source: where}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i].Value, node.Content[i+1]
		field := nodes.JoinField(where, key)
		if !partialSpecFields[key] {
			return nil, fmt.Errorf("%s: unknown field (a template holds containers, initContainers, volumes, metadata, parameters and reservedPorts)", field)
		}
		var err error
		switch key {
		case "containers":
			t.Containers, err = namedItems(value, field)
		case "initContainers":
			t.InitContainers, err = namedItems(value, field)
		case "volumes":
			t.Volumes, err = namedItems(value, field)
		case "metadata":
			t.Labels, t.Annotations, err = parseTemplateMetadata(value, field)
		case "parameters":
			t.Parameters, err = parseParameters(value, field)
		case "reservedPorts":
			t.ReservedPorts, err = parseReservedPorts(value, field)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	if err := t.validateReservedPorts(); err != nil {
		return nil, err
	}
	t.ports = t.listSidecarPorts()
	if err := t.bindParameters(where); err != nil {
		return nil, err
	}
	return t, nil
}

// namedItems checks that value is a sequence of mappings and returns copies
// of its items.
func namedItems(value *yaml.Node, field string) ([]*yaml.Node, error) {
	if nodes.IsNull(value) {
		return nil, nil
	}
	if value.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list", field)
	}
	items := make([]*yaml.Node, 0, len(value.Content))
	for i, item := range value.Content {
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s[%d]: must be a mapping", field, i)
		}
		items = append(items, yamltext.Copy(item))
	}
	return items, nil
}

func parseTemplateMetadata(value *yaml.Node, field string) (labels, annotations []KeyValue, err error) {
	if value.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: must be a mapping with labels and annotations", field)
	}
	for i := 0; i+1 < len(value.Content); i += 2 {
		key, v := value.Content[i].Value, value.Content[i+1]
		sub := nodes.JoinField(field, key)
		switch key {
		case "labels":
			labels, err = stringMap(v, sub)
		case "annotations":
			annotations, err = stringMap(v, sub)
		default:
			return nil, nil, fmt.Errorf("%s: unknown field (template metadata holds labels and annotations)", sub)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return labels, annotations, nil
}

func stringMap(value *yaml.Node, field string) ([]KeyValue, error) {
	if nodes.IsNull(value) {
		return nil, nil
	}
	if value.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping of strings", field)
	}
	out := make([]KeyValue, 0, len(value.Content)/2)
	for i := 0; i+1 < len(value.Content); i += 2 {
		k, v := value.Content[i], value.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s.%s: must be a string", field, k.Value)
		}
		if k.Value == naming.StatusAnnotation {
			return nil, fmt.Errorf("%s.%s: is managed by kubectl-inject and cannot be set by a template", field, k.Value)
		}
		out = append(out, KeyValue{Key: k.Value, Value: v.Value})
	}
	return out, nil
}

// validate rejects templates that could not produce a valid Pod.
func (t *Template) validate() error {
	if len(t.Containers) == 0 && len(t.InitContainers) == 0 {
		if t.Source == "" {
			return fmt.Errorf("template has no containers or initContainers")
		}
		return fmt.Errorf("%s: template has no containers or initContainers", t.Source)
	}
	seen := map[string]string{}
	check := func(list []*yaml.Node, field string, needImage bool) error {
		for i, item := range list {
			at := fmt.Sprintf("%s[%d]", nodes.JoinField(t.Source, field), i)
			name := nodes.ScalarField(item, "name")
			if name == "" {
				return fmt.Errorf("%s.name: is required", at)
			}
			if !grammar.IsDNSLabel(name) {
				return fmt.Errorf("%s.name: %q is not a valid name (lower-case letters, digits and '-', at most 63)", at, name)
			}
			if needImage && nodes.ScalarField(item, "image") == "" {
				return fmt.Errorf("%s.image: is required (container %q)", at, name)
			}
			if prev, dup := seen[field+"/"+name]; dup {
				return fmt.Errorf("%s.name: %q is also used by %s", at, name, prev)
			}
			seen[field+"/"+name] = at
		}
		return nil
	}
	if err := check(t.Containers, "containers", true); err != nil {
		return err
	}
	// Containers and init containers share one name space in a Pod.
	for k, v := range seen {
		seen["initContainers/"+k[len("containers/"):]] = v
	}
	if err := check(t.InitContainers, "initContainers", true); err != nil {
		return err
	}
	return check(t.Volumes, "volumes", false)
}

// Hash identifies the template's content. It changes whenever anything the
// template injects changes, and only then. A template without parameters
// hashes as it did before parameters existed, so records written by earlier
// versions stay current.
func (t *Template) Hash() string {
	type canonParameter struct {
		Annotation, Field, Default, Type string
		Expression                       string `json:",omitempty"`
	}
	canon := struct {
		Containers, InitContainers, Volumes []any
		Labels, Annotations                 []KeyValue
		Parameters                          []canonParameter `json:",omitempty"`
		ReservedPorts                       []ReservedPort   `json:",omitempty"`
	}{
		Containers:     nodesToAny(t.Containers),
		InitContainers: nodesToAny(t.InitContainers),
		Volumes:        nodesToAny(t.Volumes),
		Labels:         t.Labels,
		Annotations:    t.Annotations,
		ReservedPorts:  t.ReservedPorts,
	}
	for _, p := range t.Parameters {
		canon.Parameters = append(canon.Parameters, canonParameter{p.Annotation, p.Field, p.Default, string(p.Type), p.Expression})
	}
	b, err := json.Marshal(canon) // map keys are sorted by encoding/json
	if err != nil {
		// Nodes come from parsed YAML and always decode; keep the hash total.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}

func nodesToAny(nodes []*yaml.Node) []any {
	out := make([]any, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeValue(n))
	}
	return out
}

// nodeValue decodes a node to plain Go values for comparison and hashing.
func nodeValue(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return v
}

// WithNative returns a copy of the template with its sidecars moved to native
// form (init containers with restartPolicy: Always) or, when native is false,
// to classic containers. Init containers that are not sidecars stay.
func (t *Template) WithNative(native bool) *Template {
	out := &Template{Labels: t.Labels, Annotations: t.Annotations, Volumes: t.Volumes, Parameters: t.Parameters,
		ReservedPorts: t.ReservedPorts, ports: t.ports, Source: t.Source}
	if native {
		out.InitContainers = append(out.InitContainers, t.InitContainers...)
		for _, c := range t.Containers {
			c = yamltext.Copy(c)
			nodes.SetScalarField(c, "restartPolicy", "Always")
			out.InitContainers = append(out.InitContainers, c)
		}
		return out
	}
	out.Containers = append(out.Containers, t.Containers...)
	for _, c := range t.InitContainers {
		if nodes.ScalarField(c, "restartPolicy") != "Always" {
			out.InitContainers = append(out.InitContainers, c)
			continue
		}
		c = yamltext.Copy(c)
		nodes.DeleteField(c, "restartPolicy")
		out.Containers = append(out.Containers, c)
	}
	return out
}

// Names lists the container and volume names the template adds, sorted.
func (t *Template) Names() []string {
	var names []string
	for _, list := range [][]*yaml.Node{t.Containers, t.InitContainers, t.Volumes} {
		names = append(names, nodes.NamesOf(list)...)
	}
	sort.Strings(names)
	return names
}

// withImage returns a copy whose first sidecar uses image.
func (t *Template) withImage(image string) *Template {
	out := *t
	switch {
	case len(t.Containers) > 0:
		out.Containers = append([]*yaml.Node{}, t.Containers...)
		out.Containers[0] = yamltext.Copy(t.Containers[0])
		nodes.SetScalarField(out.Containers[0], "image", image)
	case len(t.InitContainers) > 0:
		i := 0
		for j, c := range t.InitContainers {
			if nodes.ScalarField(c, "restartPolicy") == "Always" {
				i = j
				break
			}
		}
		out.InitContainers = append([]*yaml.Node{}, t.InitContainers...)
		out.InitContainers[i] = yamltext.Copy(t.InitContainers[i])
		nodes.SetScalarField(out.InitContainers[i], "image", image)
	}
	return &out
}
