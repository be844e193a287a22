package inject

import (
	"fmt"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// PodTemplatePath says where a kind keeps its pod template: a mapping with
// metadata and spec. An empty Path means the object itself is the Pod.
type PodTemplatePath struct {
	Group string
	Kind  string
	Path  []string
}

// builtinPaths are the kinds injected without configuration.
var builtinPaths = []PodTemplatePath{
	{Group: "", Kind: "Pod"},
	{Group: "", Kind: "PodTemplate", Path: []string{"template"}},
	{Group: "", Kind: "ReplicationController", Path: []string{"spec", "template"}},
	{Group: "apps", Kind: "Deployment", Path: []string{"spec", "template"}},
	{Group: "apps", Kind: "ReplicaSet", Path: []string{"spec", "template"}},
	{Group: "apps", Kind: "StatefulSet", Path: []string{"spec", "template"}},
	{Group: "apps", Kind: "DaemonSet", Path: []string{"spec", "template"}},
	{Group: "batch", Kind: "Job", Path: []string{"spec", "template"}},
	{Group: "batch", Kind: "CronJob", Path: []string{"spec", "jobTemplate", "spec", "template"}},
}

// BuiltinPodTemplatePath is where a kind injected without configuration
// keeps its pod template (nil for a Pod); false for another kind.
func BuiltinPodTemplatePath(group, kind string) ([]string, bool) {
	for _, p := range builtinPaths {
		if p.Group == group && p.Kind == kind {
			return p.Path, true
		}
	}
	return nil, false
}

// ParsePodTemplatePath reads "Kind[.group]=field.path", for example
// "Rollout.argoproj.io=spec.template".
func ParsePodTemplatePath(s string) (PodTemplatePath, error) {
	kindGroup, path, ok := strings.Cut(s, "=")
	if !ok || kindGroup == "" || path == "" {
		return PodTemplatePath{}, fmt.Errorf("pod template path %q: want Kind[.group]=field.path, e.g. Rollout.argoproj.io=spec.template", s)
	}
	kind, group, _ := strings.Cut(kindGroup, ".")
	fields := strings.Split(path, ".")
	for _, f := range fields {
		if f == "" {
			return PodTemplatePath{}, fmt.Errorf("pod template path %q: empty field name in %q", s, path)
		}
	}
	return PodTemplatePath{Group: group, Kind: kind, Path: fields}, nil
}

// String renders the path in the form ParsePodTemplatePath reads.
func (p PodTemplatePath) String() string {
	kind := p.Kind
	if p.Group != "" {
		kind += "." + p.Group
	}
	return kind + "=" + strings.Join(p.Path, ".")
}

// MarshalText writes the path as String does, so that settings carry it
// as text.
func (p PodTemplatePath) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads the form ParsePodTemplatePath reads.
func (p *PodTemplatePath) UnmarshalText(text []byte) error {
	parsed, err := ParsePodTemplatePath(string(text))
	if err != nil {
		return err
	}
	*p = parsed
	return nil
}

// apiGroup returns the group of an apiVersion ("apps/v1" -> "apps", "v1" -> "").
func apiGroup(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// lookupPath returns the pod-template path for an object's kind, user paths first.
func lookupPath(user []PodTemplatePath, apiVersion, kind string) (PodTemplatePath, bool) {
	group := apiGroup(apiVersion)
	for _, list := range [][]PodTemplatePath{user, builtinPaths} {
		for _, p := range list {
			if p.Kind == kind && (p.Group == group || (p.Group == "apps" && group == "extensions")) {
				return p, true
			}
		}
	}
	return PodTemplatePath{}, false
}

// podTarget is one pod template inside an object, located in the tree.
type podTarget struct {
	obj      *yaml.Node // the object's root mapping
	template *yaml.Node // the mapping holding metadata and spec (obj for a Pod)
	meta     *yaml.Node // template metadata mapping, nil when absent
	spec     *yaml.Node // the pod spec mapping
	field    string     // dotted path of the pod template, for messages
	// blank returns what is between the brackets of an empty collection
	// when the injected items replace it (see textDoc.emptyInner); nil on
	// the node path, which has no text.
	blank func(*yaml.Node) string
}

// emptyText returns what is between the brackets of the empty collection
// n that the items injected into it replace: "" on the node path, and for
// collections that keep it.
func (t *podTarget) emptyText(n *yaml.Node) string {
	if t.blank == nil || n == nil || len(n.Content) > 0 || (n.Kind != yaml.SequenceNode && n.Kind != yaml.MappingNode) {
		return ""
	}
	return t.blank(n)
}

// specField names a field of the pod spec for messages.
func (t *podTarget) specField(name string) string {
	return nodes.JoinField(nodes.JoinField(t.field, "spec"), name)
}

// findPodTarget locates the pod template of obj along p.
func findPodTarget(obj *yaml.Node, p PodTemplatePath) (*podTarget, error) {
	podTemplate := obj
	for i, f := range p.Path {
		next := nodes.MapValue(podTemplate, f)
		if next == nil || next.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: is missing or not a mapping", strings.Join(p.Path[:i+1], "."))
		}
		podTemplate = next
	}
	field := strings.Join(p.Path, ".")
	spec := nodes.MapValue(podTemplate, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: is missing or not a mapping", nodes.JoinField(field, "spec"))
	}
	meta := nodes.MapValue(podTemplate, "metadata")
	if meta != nil && meta.Kind != yaml.MappingNode {
		if !nodes.IsNull(meta) {
			return nil, fmt.Errorf("%s: is not a mapping", nodes.JoinField(field, "metadata"))
		}
		meta = nil
	}
	return &podTarget{obj: obj, template: podTemplate, meta: meta, spec: spec, field: field}, nil
}

// isList reports whether a document is a kind: List (or a typed *List).
func isList(obj *yaml.Node) bool {
	kind := nodes.ScalarField(obj, "kind")
	items := nodes.MapValue(obj, "items")
	return strings.HasSuffix(kind, "List") && items != nil && items.Kind == yaml.SequenceNode
}
