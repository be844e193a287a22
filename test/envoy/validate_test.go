package envoy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"sigs.k8s.io/yaml"
)

// validateBootstrap checks a bootstrap (YAML) the way Envoy would load
// it, and more: the bootstrap and every typed_config inside it, unpacked
// recursively, pass their own ValidateAll; every cluster a filter or
// route names exists; listener ports are distinct and none is an app
// port (appPorts) or the admin port.
func validateBootstrap(config []byte, appPorts map[uint32]bool) (*bootstrapv3.Bootstrap, error) {
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

// defaultBootstrap is the embedded default's bootstrap with the app port
// set.
func defaultBootstrap(t *testing.T) string {
	t.Helper()
	pods := podSpecs(t, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: app, image: busybox, ports: [{containerPort: 8080}]}\n"))
	if len(pods) != 1 {
		t.Fatalf("%d pod specs", len(pods))
	}
	return flagValue(expandArgs(sidecar(injectDefault(t, pods[0]))), "--config-yaml")
}

// TestValidatorRejects: each broken bootstrap fails the check with the
// reason named; the default passes it.
func TestValidatorRejects(t *testing.T) {
	good := defaultBootstrap(t)
	if _, err := validateBootstrap([]byte(good), map[uint32]bool{8080: true}); err != nil {
		t.Fatalf("the default: %v", err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"tcp proxy without a cluster", "cluster: app\n", "\n", "ClusterSpecifier"},
		{"hcm without routes", "route_config:", "", ""},
		{"route to a missing cluster", "route: {cluster: admin}", "route: {cluster: nowhere}", `cluster "nowhere", which does not exist`},
		{"duplicate listener ports", "port_value: 9902}", "port_value: 10000}", "port 10000 is also listener app's"},
		{"listener on the admin port", "port_value: 9902}", "port_value: 9901}", "port 9901 is also the admin API's"},
		{"unknown typed_config", "envoy.extensions.filters.http.router.v3.Router", "envoy.extensions.filters.http.nope.v3.Nope", "Nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(good, c.from) {
				t.Fatalf("the default's bootstrap has no %q", c.from)
			}
			broken := strings.Replace(good, c.from, c.to, 1)
			if c.name == "hcm without routes" {
				broken = dropHCMRoutes(t, good)
				c.want = "RouteSpecifier"
			}
			_, err := validateBootstrap([]byte(broken), map[uint32]bool{8080: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// dropHCMRoutes removes the HttpConnectionManager's route_config block.
func dropHCMRoutes(t *testing.T, config string) string {
	t.Helper()
	lines := strings.Split(config, "\n")
	var out []string
	skip := -1
	for _, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if skip >= 0 && indent > skip {
			continue
		}
		skip = -1
		if strings.TrimSpace(l) == "route_config:" {
			skip = indent
			continue
		}
		out = append(out, l)
	}
	if len(out) == len(lines) {
		t.Fatal("no route_config in the bootstrap")
	}
	return strings.Join(out, "\n")
}
