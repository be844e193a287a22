package template

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kinject/kubectl-inject/pkg/inject/grammar"
	"github.com/kinject/kubectl-inject/pkg/internal/nodes"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Drain is how a template's proxy is taken out of service before an
// upgrade in place changes its image: an HTTP POST to Fail on Port of the
// Pod (reached through the API server's port-forward, so a loopback-only
// admin API serves) makes the proxy's readiness fail while it keeps
// serving; once no EndpointSlice lists the Pod as ready, the proxy keeps
// serving Seconds more, for the clients that read the slices late, and
// only then is its image changed. Restore, POSTed the same way, undoes
// Fail when the upgrade stops before the image changes.
//
// Drain changes nothing a Pod is given: it is not part of the template's
// Hash, so declaring it leaves every Pod current.
type Drain struct {
	// Container is the sidecar whose endpoint is called.
	Container string
	Port      int
	Fail      string
	Restore   string
	Seconds   int
}

// drainFields lists what a drain holds, for messages.
const drainFields = "container, port, fail, restore and seconds"

// MaxDrainSeconds bounds Drain.Seconds: a drain longer than this is a
// mistake rather than a choice.
const MaxDrainSeconds = 300

// parseDrain reads a template's drain mapping.
func parseDrain(value *yaml.Node, field string) (*Drain, error) {
	if value.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: must be a mapping with %s", field, drainFields)
	}
	d := &Drain{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(value.Content); i += 2 {
		k, v := value.Content[i].Value, value.Content[i+1]
		at := field + "." + k
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: must be a scalar", at)
		}
		seen[k] = true
		switch k {
		case "container":
			d.Container = v.Value
		case "port":
			if !grammar.IsPort(v.Value) {
				return nil, fmt.Errorf("%s: %q is not a port number from 1 to 65535", at, v.Value)
			}
			d.Port, _ = strconv.Atoi(v.Value)
		case "fail", "restore":
			if !strings.HasPrefix(v.Value, "/") || strings.ContainsAny(v.Value, " \t\r\n#") {
				return nil, fmt.Errorf("%s: %q is not an HTTP path (it starts with / and holds no space or #)", at, v.Value)
			}
			if k == "fail" {
				d.Fail = v.Value
			} else {
				d.Restore = v.Value
			}
		case "seconds":
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 0 || n > MaxDrainSeconds {
				return nil, fmt.Errorf("%s: %q is not a number of seconds from 0 to %d", at, v.Value, MaxDrainSeconds)
			}
			d.Seconds = n
		default:
			return nil, fmt.Errorf("%s: unknown field (a drain has %s)", at, drainFields)
		}
	}
	for _, required := range []string{"container", "port", "fail", "restore"} {
		if !seen[required] {
			return nil, fmt.Errorf("%s.%s: is required", field, required)
		}
	}
	return d, nil
}

// validateDrain checks the drain against the template: its container is
// one of the template's sidecars, and its port one that sidecar binds
// (declared or reserved), so no app can hold it.
func (t *Template) validateDrain() error {
	if t.Drain == nil {
		return nil
	}
	at := nodes.JoinField(t.Source, "drain")
	found := false
	for _, c := range t.sidecarItems() {
		found = found || nodes.ScalarField(c, "name") == t.Drain.Container
	}
	if !found {
		return fmt.Errorf("%s.container: the template has no container named %q", at, t.Drain.Container)
	}
	for _, p := range t.ports {
		if p.Container == t.Drain.Container && p.Port == t.Drain.Port && p.Protocol == "TCP" {
			return nil
		}
	}
	return fmt.Errorf("%s.port: container %q neither declares nor reserves port %d/TCP (list it in reservedPorts)", at, t.Drain.Container, t.Drain.Port)
}

// document writes the drain as parseDrain reads it.
func (d *Drain) document() *yaml.Node {
	number := func(n int) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)} }
	return fields("container", nodes.NewString(d.Container), "port", number(d.Port),
		"fail", nodes.NewString(d.Fail), "restore", nodes.NewString(d.Restore), "seconds", number(d.Seconds))
}
