package envoycheck

import (
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// baseBootstrap has the shape of the default's bootstrap, written out so
// that a change of the default cannot weaken these tests: an Any one deep
// (the TcpProxy, the HttpConnectionManager on a listener's filter) and an
// Any two deep (the Router inside the HttpConnectionManager). The app
// port is 8080.
const baseBootstrap = `admin:
  address:
    socket_address: {address: 127.0.0.1, port_value: 9901}
static_resources:
  listeners:
  - name: app
    address:
      socket_address: {address: 0.0.0.0, port_value: 10000}
    filter_chains:
    - filters:
      - name: envoy.filters.network.tcp_proxy
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
          stat_prefix: app
          cluster: app
  - name: stats
    address:
      socket_address: {address: 0.0.0.0, port_value: 9902}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: stats
          route_config:
            name: stats
            virtual_hosts:
            - name: stats
              domains: ["*"]
              routes:
              - match: {path: /ready}
                route: {cluster: admin}
          http_filters:
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
  clusters:
  - name: app
    type: STATIC
    connect_timeout: 1s
    load_assignment:
      cluster_name: app
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address: {address: 127.0.0.1, port_value: 8080}
  - name: admin
    type: STATIC
    connect_timeout: 1s
    load_assignment:
      cluster_name: admin
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address: {address: 127.0.0.1, port_value: 9901}
`

const (
	tcpProxyAt = "bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config(envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy)"
	hcmAt      = "bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config(envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager)"
	routerAt   = hcmAt + ".http_filters[0].typed_config(envoy.extensions.filters.http.router.v3.Router)"
)

// TestBootstrapChecks breaks the base bootstrap once per check of
// Bootstrap, at every depth an Any is found in the default and the
// examples, and wants that check's own error: each case fails when the
// check it names is removed.
func TestBootstrapChecks(t *testing.T) {
	t.Parallel()
	if _, err := Bootstrap([]byte(baseBootstrap), map[uint32]bool{8080: true}); err != nil {
		t.Fatalf("the base bootstrap: %v", err)
	}
	for _, c := range []struct {
		name     string
		from, to string
		appPorts []uint32
		want     string
	}{{
		name: "not YAML",
		from: "admin:\n", to: "admin: [\n",
		want: "yaml: line 2: did not find expected ',' or ']'",
	}, {
		name: "a field Envoy's API does not have",
		from: "admin:\n", to: "nope: 1\nadmin:\n",
		want: "Envoy's API rejects the bootstrap",
	}, {
		name: "an Any of an unknown type in the YAML",
		from: "http.router.v3.Router", to: "http.nope.v3.Nope",
		want: "Envoy's API rejects the bootstrap",
	}, {
		// Depth 0: the bootstrap's own rules (ValidateAll).
		name: "a cluster without a connect timeout above zero",
		from: "connect_timeout: 1s", to: "connect_timeout: 0s",
		want: "bootstrap: invalid Bootstrap.StaticResources: embedded message failed validation | caused by: invalid Bootstrap_StaticResources.Clusters[0]: embedded message failed validation | caused by: invalid Cluster.ConnectTimeout: value must be greater than 0s",
	}, {
		// Depth 1: ValidateAll of the bootstrap stops at the Any.
		name: "a TcpProxy without a stat prefix, one Any deep",
		from: "stat_prefix: app\n", to: "\n",
		want: tcpProxyAt + ": invalid TcpProxy.StatPrefix",
	}, {
		name: "an HttpConnectionManager without a stat prefix, one Any deep",
		from: "stat_prefix: stats\n", to: "\n",
		want: hcmAt + ": invalid HttpConnectionManager.StatPrefix",
	}, {
		// Depth 2: ValidateAll of the HttpConnectionManager stops at the
		// Router's Any too.
		name: "a Router with a header it cannot check, two Anys deep",
		from: "http.router.v3.Router\n", to: "http.router.v3.Router\n              strict_check_headers: [x-nope]\n",
		want: routerAt + ": invalid Router.StrictCheckHeaders[0]",
	}, {
		// An Any held in a map (the default has none; the walk covers it).
		name: "an invalid Router in a cluster's map of protocol options",
		from: "  - name: admin\n", to: "  - name: admin\n    typed_extension_protocol_options:\n      router:\n        \"@type\": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router\n        strict_check_headers: [x-nope]\n",
		want: "bootstrap.static_resources.clusters[1].typed_extension_protocol_options[router](envoy.extensions.filters.http.router.v3.Router): invalid Router.StrictCheckHeaders[0]",
	}, {
		name: "a route to a cluster that does not exist",
		from: "route: {cluster: admin}", to: "route: {cluster: nowhere}",
		want: `listener stats: filter envoy.filters.network.http_connection_manager sends to cluster "nowhere", which does not exist`,
	}, {
		name: "a TCP proxy to a cluster that does not exist",
		from: "cluster: app\n", to: "cluster: nowhere\n",
		want: `listener app: filter envoy.filters.network.tcp_proxy sends to cluster "nowhere", which does not exist`,
	}, {
		name: "a network filter whose clusters the check does not know",
		from: "network.tcp_proxy.v3.TcpProxy\n          stat_prefix: app\n          cluster: app\n", to: "http.router.v3.Router\n",
		want: "listener app: filter envoy.filters.network.tcp_proxy: a filter of type type.googleapis.com/envoy.extensions.filters.http.router.v3.Router: teach the check its clusters",
	}, {
		name: "two listeners on one port",
		from: "port_value: 9902}", to: "port_value: 10000}",
		want: "listener stats: port 10000 is also listener app's",
	}, {
		name: "a listener on the admin port",
		from: "port_value: 9902}", to: "port_value: 9901}",
		want: "listener stats: port 9901 is also the admin API's",
	}, {
		name:     "a listener on an app port",
		appPorts: []uint32{10000},
		want:     "listener app: port 10000 is an app port",
	}, {
		name:     "the admin API on an app port",
		appPorts: []uint32{9901},
		want:     "admin: port 9901 is an app port",
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			config := baseBootstrap
			if c.from != "" {
				if !strings.Contains(config, c.from) {
					t.Fatalf("the base bootstrap has no %q", c.from)
				}
				config = strings.Replace(config, c.from, c.to, 1)
			}
			ports := map[uint32]bool{8080: true}
			for _, p := range c.appPorts {
				ports[p] = true
			}
			_, err := Bootstrap([]byte(config), ports)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// TestUnregisteredAny: an Any whose type no linked package registers
// reaches UnmarshalNew (protojson refuses it earlier, so it is built
// here) and is an error, not a message the walk cannot see into.
func TestUnregisteredAny(t *testing.T) {
	t.Parallel()
	b := &bootstrapv3.Bootstrap{}
	if err := validateDeep(b, "bootstrap"); err != nil {
		t.Fatalf("an empty bootstrap: %v", err)
	}
	b.StaticResources = &bootstrapv3.Bootstrap_StaticResources{Listeners: []*listenerv3.Listener{{
		Name: "app",
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name:       "nope",
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: &anypb.Any{TypeUrl: "type.googleapis.com/nope.v3.Nope"}},
		}}}},
	}}}
	err := validateDeep(b, "bootstrap")
	want := "bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config: type.googleapis.com/nope.v3.Nope: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v\nwant it to start with %q", err, want)
	}
}
