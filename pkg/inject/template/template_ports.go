package template

import (
	"fmt"
	"strconv"

	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The template's ports: which sidecar binds which port, checked when the
// template is read, and asked by the injector and the front ends.

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
func (t *Template) ReservedOf(container string) []SidecarPort {
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

// BoundPorts lists the ports the template's sidecars bind, as far as
// their configuration can be read (an Envoy bootstrap passed inline with
// --config-yaml: the admin API and the static listeners).
func (t *Template) BoundPorts() []BoundPort {
	var out []BoundPort
	for _, c := range t.sidecarItems() {
		name := nodes.ScalarField(c, "name")
		for _, b := range envoyBoundPorts(c) {
			b.Container = name
			out = append(out, b)
		}
	}
	return out
}

// UnreservedPorts lists the BoundPorts that no containerPort declares
// and reservedPorts does not list: the conflict checks cannot keep an app
// off them.
func (t *Template) UnreservedPorts() []BoundPort {
	known := map[string]bool{}
	for _, p := range t.SidecarPorts() {
		known[p.Container+"/"+strconv.Itoa(p.Port)] = true
	}
	var out []BoundPort
	for _, b := range t.BoundPorts() {
		if !known[b.Container+"/"+strconv.Itoa(b.Port)] {
			out = append(out, b)
		}
	}
	return out
}
