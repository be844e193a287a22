package template

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
	// Drain, when set, is how restart takes the proxy out of service
	// before it upgrades it in place (not part of Hash).
	Drain *Drain
	ports []SidecarPort // SidecarPorts, listed when parsed
	// Source says where the template came from, for messages.
	Source string
}

// KeyValue is one label or annotation, kept in template order.
type KeyValue struct {
	Key, Value string
}

// Validate rejects templates that could not produce a valid Pod.
func (t *Template) Validate() error {
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

func nodesToAny(items []*yaml.Node) []any {
	out := make([]any, 0, len(items))
	for _, n := range items {
		out = append(out, nodes.PlainValue(n))
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

// ClassicSidecars lists the names of the template's classic sidecars (its
// containers), joined for MessageRunsToCompletion, or "" when it has none.
func (t *Template) ClassicSidecars() string {
	names := nodes.NamesOf(t.Containers)
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return strings.Join(names, ", ")
}
