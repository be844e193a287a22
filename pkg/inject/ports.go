package inject

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/inject/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ReservedPort is a port a sidecar binds without declaring it as a
// containerPort, such as Envoy's admin API on 127.0.0.1:9901. Containers
// of a Pod share one network namespace, loopback included: an app that
// uses the port would fail to start, or receive the sidecar's traffic.
type ReservedPort struct {
	Port     int
	Protocol string // TCP, UDP or SCTP
	// Container is the template's sidecar that binds the port.
	Container string
	// Description says what listens there, for messages.
	Description string
}

// SidecarPort is a port one of the template's sidecars uses: a declared
// containerPort or a reserved one.
type SidecarPort struct {
	Port      int
	Protocol  string
	Container string
	// What names the port in messages: "containerPort envoy-stats" or a
	// reserved port's description.
	What     string
	Reserved bool
}

// Key is the port as the conflict checks compare it: NUMBER/PROTOCOL.
func (p SidecarPort) Key() string { return strconv.Itoa(p.Port) + "/" + p.Protocol }

// parseReservedPorts reads a template's reservedPorts list.
func parseReservedPorts(value *yaml.Node, field string) ([]ReservedPort, error) {
	if nodes.IsNull(value) {
		return nil, nil
	}
	if value.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: must be a list", field)
	}
	var out []ReservedPort
	for i, item := range value.Content {
		at := fmt.Sprintf("%s[%d]", field, i)
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a mapping with port, protocol, container and description", at)
		}
		r := ReservedPort{Protocol: "TCP"}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j].Value, item.Content[j+1]
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s.%s: must be a scalar", at, k)
			}
			switch k {
			case "port":
				if !grammar.IsPort(v.Value) {
					return nil, fmt.Errorf("%s.port: %q is not a port number from 1 to 65535", at, v.Value)
				}
				r.Port, _ = strconv.Atoi(v.Value)
			case "protocol":
				if v.Value != "TCP" && v.Value != "UDP" && v.Value != "SCTP" {
					return nil, fmt.Errorf("%s.protocol: %q is not TCP, UDP or SCTP", at, v.Value)
				}
				r.Protocol = v.Value
			case "container":
				r.Container = v.Value
			case "description":
				r.Description = v.Value
			default:
				return nil, fmt.Errorf("%s.%s: unknown field (a reserved port has port, protocol, container and description)", at, k)
			}
		}
		if r.Port == 0 {
			return nil, fmt.Errorf("%s.port: is required", at)
		}
		if r.Container == "" {
			return nil, fmt.Errorf("%s.container: is required (the sidecar that binds port %d)", at, r.Port)
		}
		out = append(out, r)
	}
	return out, nil
}

// validateReservedPorts checks each reserved port against the template:
// its container is one of the template's, and no container of the
// template declares the port already (it would be listed twice).
func (t *Template) validateReservedPorts() error {
	seen := map[string]string{}
	for _, p := range t.declaredPorts() {
		seen[p.Key()] = fmt.Sprintf("containerPort of container %q", p.Container)
	}
	names := map[string]bool{}
	for _, c := range t.sidecarItems() {
		names[nodes.ScalarField(c, "name")] = true
	}
	for i, r := range t.ReservedPorts {
		at := fmt.Sprintf("%s[%d]", nodes.JoinField(t.Source, "reservedPorts"), i)
		if !names[r.Container] {
			return fmt.Errorf("%s.container: the template has no container named %q", at, r.Container)
		}
		key := strconv.Itoa(r.Port) + "/" + r.Protocol
		if prev, dup := seen[key]; dup {
			return fmt.Errorf("%s.port: %s is already a %s", at, key, prev)
		}
		seen[key] = "reserved port"
	}
	return nil
}

// declaredPorts are the containerPorts of the template's sidecars.
func (t *Template) declaredPorts() []SidecarPort {
	var out []SidecarPort
	for _, c := range t.sidecarItems() {
		for _, p := range nodes.SeqItems(nodes.MapValue(c, "ports")) {
			n, err := strconv.Atoi(nodes.ScalarField(p, "containerPort"))
			if err != nil {
				continue
			}
			proto := nodes.ScalarField(p, "protocol")
			if proto == "" {
				proto = "TCP"
			}
			what := "containerPort"
			if name := nodes.ScalarField(p, "name"); name != "" {
				what += " " + name
			}
			out = append(out, SidecarPort{Port: n, Protocol: proto, Container: nodes.ScalarField(c, "name"), What: what})
		}
	}
	return out
}

// sidecarItems are the template's containers and init containers.
func (t *Template) sidecarItems() []*yaml.Node {
	return append(append([]*yaml.Node(nil), t.Containers...), t.InitContainers...)
}

// SidecarPorts lists every port the template's sidecars use: the declared
// containerPorts, then the reserved ports. A parsed template lists them
// once, when it is read: the checks of every object use the list.
func (t *Template) SidecarPorts() []SidecarPort {
	if t.ports != nil {
		return t.ports
	}
	return t.listSidecarPorts()
}

func (t *Template) listSidecarPorts() []SidecarPort {
	out := t.declaredPorts()
	for _, r := range t.ReservedPorts {
		what := r.Description
		if what == "" {
			what = "reserved"
		}
		out = append(out, SidecarPort{Port: r.Port, Protocol: r.Protocol, Container: r.Container, What: what, Reserved: true})
	}
	return out
}

// reservedOf are the reserved ports container binds.
func (t *Template) reservedOf(container string) []SidecarPort {
	var out []SidecarPort
	for _, p := range t.SidecarPorts() {
		if p.Reserved && p.Container == container {
			out = append(out, p)
		}
	}
	return out
}

// PortValues are the sidecar ports a port parameter may not take (the
// TCP ones, the app's port being TCP), each once, first use first, as
// PortTaken finds them.
func (t *Template) PortValues() []SidecarPort {
	var out []SidecarPort
	seen := map[int]bool{}
	for _, p := range t.SidecarPorts() {
		if p.Protocol == "TCP" && !seen[p.Port] {
			seen[p.Port] = true
			out = append(out, p)
		}
	}
	return out
}

// PortTaken returns the sidecar port a value of a port parameter would
// collide with (the app's port is TCP), and whether there is one.
func (t *Template) PortTaken(value string) (SidecarPort, bool) {
	for _, p := range t.PortValues() {
		if strconv.Itoa(p.Port) == value {
			return p, true
		}
	}
	return SidecarPort{}, false
}

// checkPorts refuses sidecar ports that an app container already uses:
// both would bind the same port in the pod's shared network namespace.
// Each sidecar's declared ports are checked, then the ports the template
// reserves for it.
func (pt profileTarget) checkPorts(tpl *Template, sidecars []*yaml.Node) error {
	t := pt.podTarget
	used := map[string]string{}      // port: the container using it
	where := map[string]*yaml.Node{} // port: its entry in that container
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range nodes.SeqItems(nodes.MapValue(t.spec, list)) {
			for _, p := range nodes.SeqItems(nodes.MapValue(c, "ports")) {
				used[portKey(p)], where[portKey(p)] = nodes.ScalarField(c, "name"), p
			}
		}
	}
	for _, s := range sidecars {
		sidecar := nodes.ScalarField(s, "name")
		// The declared ports by their text (NUMBER/PROTOCOL), as the
		// app's are keyed, then the reserved ones.
		type use struct{ key, number, what string }
		var uses []use
		for _, p := range nodes.SeqItems(nodes.MapValue(s, "ports")) {
			uses = append(uses, use{portKey(p), nodes.ScalarField(p, "containerPort"), ""})
		}
		for _, r := range tpl.reservedOf(sidecar) {
			uses = append(uses, use{r.Key(), strconv.Itoa(r.Port), r.What})
		}
		for _, u := range uses {
			app, clash := used[u.key]
			if !clash {
				continue
			}
			if owner, ok := pt.rest.owner(ConflictContainer, app); ok {
				return pt.conflict(message(MessagePortOwned, u.key, pt.specField("containers"), strconv.Quote(app), strconv.Quote(sidecar)), owner)
			}
			msg := message(MessagePortUsed, t.specField("containers"), strconv.Quote(sidecar), u.number, strconv.Quote(app))
			if u.what != "" {
				msg = message(MessagePortReserved, t.specField("containers"), strconv.Quote(sidecar), u.number, u.what, strconv.Quote(app))
			}
			return atNode(where[u.key], t.specField("containers"), &conflictError{msg})
		}
	}
	return nil
}

func portKey(p *yaml.Node) string {
	proto := nodes.ScalarField(p, "protocol")
	if proto == "" {
		proto = "TCP"
	}
	return nodes.ScalarField(p, "containerPort") + "/" + proto
}

// checkOverridePort refuses an override of a port parameter that names a
// port of the template's sidecars: the sidecar would proxy to itself.
func (t *Template) checkOverridePort(p Parameter, where, key, value string) error {
	if p.Type != TypePort {
		return nil
	}
	if sp, taken := t.PortTaken(value); taken {
		return errors.New(message(MessagePortValue, where, strconv.Quote(key), strconv.Quote(value), strconv.Quote(sp.Container), sp.What))
	}
	return nil
}

// checkComputedPorts refuses a port that an expression computed from the
// Pod when it names a port of the sidecars. Run after checkPorts: a port
// the app declares is named as that conflict first.
func (t *Template) checkComputedPorts(values map[string]string) error {
	for _, p := range t.Parameters {
		v, ok := values[p.Annotation]
		if !ok || p.Type != TypePort || p.Expression == "" {
			continue
		}
		if sp, taken := t.PortTaken(v); taken {
			return &conflictError{message(MessageComputedPort, p.Annotation, v, strconv.Quote(sp.Container), sp.What)}
		}
	}
	return nil
}

// BoundPort is a port a sidecar's own configuration binds.
type BoundPort struct {
	Container string
	Port      int
	// Where names it in the configuration: "admin" or "listener NAME".
	Where string
}

// UnreservedPorts lists the ports the template's sidecars bind, as far
// as their configuration can be read (an Envoy bootstrap passed inline
// with --config-yaml: the admin API and the static listeners), that no
// containerPort declares and reservedPorts does not list: the conflict
// checks cannot keep an app off them.
func (t *Template) UnreservedPorts() []BoundPort {
	known := map[string]bool{}
	for _, p := range t.SidecarPorts() {
		known[p.Container+"/"+strconv.Itoa(p.Port)] = true
	}
	var out []BoundPort
	for _, c := range t.sidecarItems() {
		name := nodes.ScalarField(c, "name")
		for _, b := range envoyBoundPorts(c) {
			if !known[name+"/"+strconv.Itoa(b.Port)] {
				b.Container = name
				out = append(out, b)
			}
		}
	}
	return out
}

// envoyBoundPorts reads the ports an inline Envoy bootstrap binds. A
// port written as a variable ($(PORT)) cannot be read and is left out.
func envoyBoundPorts(c *yaml.Node) []BoundPort {
	args := nodes.ScalarItems(nodes.MapValue(c, "args"))
	var config string
	for i, a := range args {
		if a == "--config-yaml" && i+1 < len(args) {
			config = args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--config-yaml="); ok {
			config = v
		}
	}
	if config == "" {
		return nil
	}
	doc, err := yaml.Parse(config)
	if err != nil {
		return nil
	}
	root := doc.YNode()
	port := func(addr *yaml.Node) (int, bool) {
		n, err := strconv.Atoi(nodes.ScalarField(nodes.MapValue(addr, "socket_address"), "port_value"))
		return n, err == nil && n > 0
	}
	var out []BoundPort
	if n, ok := port(nodes.MapValue(nodes.MapValue(root, "admin"), "address")); ok {
		out = append(out, BoundPort{Port: n, Where: "admin"})
	}
	for _, l := range nodes.SeqItems(nodes.MapValue(nodes.MapValue(root, "static_resources"), "listeners")) {
		if n, ok := port(nodes.MapValue(l, "address")); ok {
			out = append(out, BoundPort{Port: n, Where: "listener " + nodes.ScalarField(l, "name")})
		}
	}
	return out
}
