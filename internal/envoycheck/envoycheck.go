package envoycheck

import (
	"errors"
	"fmt"
	"strings"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"sigs.k8s.io/yaml"

	// The extension types a bootstrap may name in typed_config.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
)

// Pod checks the bootstrap of the default's Envoy sidecar in a pod spec
// (decoded JSON) as the kubelet hands it to Envoy: its args expanded from
// its env. A pod spec without the sidecar passes. It returns the
// bootstrap, nil without a sidecar.
func Pod(pod map[string]any) (*bootstrapv3.Bootstrap, error) {
	c := Sidecar(pod)
	if c == nil {
		return nil, nil
	}
	config := FlagValue(ExpandArgs(c), "--config-yaml")
	if strings.Contains(config, "$(") {
		return nil, fmt.Errorf("a variable is left unexpanded:\n%s", config)
	}
	return Bootstrap([]byte(config), AppPorts(pod))
}

// Bootstrap checks a bootstrap (YAML) the way Envoy would load
// it, and more: the bootstrap and every typed_config inside it, unpacked
// recursively, pass their own ValidateAll; every cluster a filter or
// route names exists; listener ports are distinct and none is an app
// port (appPorts) or the admin port.
func Bootstrap(config []byte, appPorts map[uint32]bool) (*bootstrapv3.Bootstrap, error) {
	js, err := yaml.YAMLToJSON(config)
	if err != nil {
		return nil, err
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &b); err != nil {
		return nil, fmt.Errorf("Envoy's API rejects the bootstrap: %w", err)
	}
	if err := validateDeep(&b, "bootstrap"); err != nil {
		return nil, err
	}
	clusters := map[string]bool{}
	for _, cl := range b.GetStaticResources().GetClusters() {
		clusters[cl.GetName()] = true
	}
	var errs []error
	admin := b.GetAdmin().GetAddress().GetSocketAddress().GetPortValue()
	ports := map[uint32]string{}
	if admin != 0 {
		ports[admin] = "the admin API"
	}
	for _, l := range b.GetStaticResources().GetListeners() {
		port := l.GetAddress().GetSocketAddress().GetPortValue()
		if prev, dup := ports[port]; dup {
			errs = append(errs, fmt.Errorf("listener %s: port %d is also %s's", l.GetName(), port, prev))
		}
		ports[port] = "listener " + l.GetName()
		if appPorts[port] {
			errs = append(errs, fmt.Errorf("listener %s: port %d is an app port", l.GetName(), port))
		}
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				names, err := filterClusterNames(f.GetTypedConfig().GetTypeUrl(), f.GetTypedConfig().GetValue())
				if err != nil {
					errs = append(errs, fmt.Errorf("listener %s: filter %s: %w", l.GetName(), f.GetName(), err))
				}
				for _, c := range names {
					if !clusters[c] {
						errs = append(errs, fmt.Errorf("listener %s: filter %s sends to cluster %q, which does not exist", l.GetName(), f.GetName(), c))
					}
				}
			}
		}
	}
	if appPorts[admin] {
		errs = append(errs, fmt.Errorf("admin: port %d is an app port", admin))
	}
	return &b, errors.Join(errs...)
}

// validateDeep runs ValidateAll on m and, recursively, on the message
// every google.protobuf.Any below it holds (ValidateAll stops at them).
// An Any of a type no linked package registers is an error: the check
// would otherwise be silent about it.
func validateDeep(m proto.Message, at string) error {
	if v, ok := m.(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	var walk func(protoreflect.Message, string) error
	walk = func(msg protoreflect.Message, at string) error {
		if a, ok := msg.Interface().(*anypb.Any); ok {
			inner, err := a.UnmarshalNew()
			if err != nil {
				return fmt.Errorf("%s: %s: %w", at, a.GetTypeUrl(), err)
			}
			return validateDeep(inner, at+"("+strings.TrimPrefix(a.GetTypeUrl(), "type.googleapis.com/")+")")
		}
		var err error
		msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
				return true
			}
			name := at + "." + string(fd.Name())
			switch {
			case fd.IsList():
				for i := 0; i < v.List().Len() && err == nil; i++ {
					err = walk(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", name, i))
				}
			case fd.IsMap():
				if fd.MapValue().Kind() == protoreflect.MessageKind {
					v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
						err = walk(mv.Message(), fmt.Sprintf("%s[%v]", name, k.Interface()))
						return err == nil
					})
				}
			default:
				err = walk(v.Message(), name)
			}
			return err == nil
		})
		return err
	}
	return walk(m.ProtoReflect(), at)
}

// filterClusterNames lists the clusters a network filter sends to.
func filterClusterNames(typeURL string, value []byte) ([]string, error) {
	switch typeURL {
	case "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy":
		var p tcpproxyv3.TcpProxy
		if err := proto.Unmarshal(value, &p); err != nil {
			return nil, err
		}
		return []string{p.GetCluster()}, nil
	case "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager":
		var h hcmv3.HttpConnectionManager
		if err := proto.Unmarshal(value, &h); err != nil {
			return nil, err
		}
		var out []string
		for _, vh := range h.GetRouteConfig().GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				out = append(out, r.GetRoute().GetCluster())
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("a filter of type %s: teach the check its clusters", typeURL)
}

// ExpandArgs expands $(VAR) in the container's args from its env, as the
// kubelet does (k8s.io/kubernetes third_party/forked/golang/expansion):
// $(VAR) of a defined variable is its value, $$ is $, anything else stays.
func ExpandArgs(c map[string]any) []string {
	env := map[string]string{}
	for _, e := range list(c["env"]) {
		e := e.(map[string]any)
		if v, ok := e["value"].(string); ok {
			env[e["name"].(string)] = v
		}
	}
	var out []string
	for _, a := range list(c["args"]) {
		out = append(out, Expand(fmt.Sprint(a), env))
	}
	return out
}

func Expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:]) // unclosed: left as written
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += end + 2
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// FlagValue is the word after flag in args, or of --flag=VALUE.
func FlagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// Sidecar returns the default's Envoy container of a pod spec, classic or
// native, nil when it has none.
func Sidecar(pod map[string]any) map[string]any {
	for _, l := range []string{"containers", "initContainers"} {
		for _, c := range list(pod[l]) {
			if c, ok := c.(map[string]any); ok && c["name"] == "envoy" && FlagValue(stringList(c["args"]), "--config-yaml") != "" {
				return c
			}
		}
	}
	return nil
}

// AppPorts are the TCP ports of the app's containers (not the
// sidecar): a UDP port may share a number with a TCP listener.
func AppPorts(pod map[string]any) map[uint32]bool {
	out := map[uint32]bool{}
	for _, l := range []string{"containers", "initContainers"} {
		for _, c := range list(pod[l]) {
			c, _ := c.(map[string]any)
			if c == nil || c["name"] == "envoy" {
				continue
			}
			for _, p := range list(c["ports"]) {
				if p, ok := p.(map[string]any); ok && (p["protocol"] == nil || p["protocol"] == "TCP") {
					if n, ok := p["containerPort"].(float64); ok {
						out[uint32(n)] = true
					}
				}
			}
		}
	}
	return out
}

func list(v any) []any { l, _ := v.([]any); return l }

func stringList(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}
