package template

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The ports a template's sidecars bind: declared in their ports lists, or
// reserved (loopback listeners no list declares).

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
	items, err := nodes.ListItems(value, field)
	if err != nil {
		return nil, err
	}
	var out []ReservedPort
	for i, item := range items {
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

// BoundPort is a port a sidecar's own configuration binds.
type BoundPort struct {
	Container string
	Port      int
	// Where names it in the configuration: "admin" or "listener NAME".
	Where string
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
