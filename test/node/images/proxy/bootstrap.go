package main

import (
	"fmt"
	"net"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
)

// plan is what the bootstrap asks the proxy to run.
type plan struct {
	admin     string
	listeners []listener
}

// listener is one listener: TCP forwarded to upstream, or HTTP routes.
type listener struct {
	name, addr string
	upstream   string
	routes     []route
}

// route sends requests whose path is path (or starts with prefix) to
// upstream.
type route struct {
	path, prefix, upstream string
}

func (p plan) listenerNames() []string {
	var names []string
	for _, l := range p.listeners {
		names = append(names, l.name+"="+l.addr)
	}
	return names
}

// readBootstrap reads a bootstrap with Envoy's API, as Envoy would (every
// typed_config validated, every cluster a filter names present), and
// turns it into a plan. A filter the stand-in does not implement is an
// error: it would otherwise pass a Pod it cannot prove.
func readBootstrap(config []byte) (plan, error) {
	b, err := envoycheck.Bootstrap(config, nil)
	if err != nil {
		return plan{}, fmt.Errorf("reading the bootstrap: %w", err)
	}
	clusters := map[string]string{}
	for _, c := range b.GetStaticResources().GetClusters() {
		eps := c.GetLoadAssignment().GetEndpoints()
		if len(eps) == 0 || len(eps[0].GetLbEndpoints()) == 0 {
			return plan{}, fmt.Errorf("cluster %s: no endpoint", c.GetName())
		}
		clusters[c.GetName()] = hostPort(eps[0].GetLbEndpoints()[0].GetEndpoint().GetAddress())
	}
	p := plan{admin: hostPort(b.GetAdmin().GetAddress())}
	if p.admin == "" {
		return plan{}, fmt.Errorf("no admin address")
	}
	for _, l := range b.GetStaticResources().GetListeners() {
		pl, err := readListener(l, clusters)
		if err != nil {
			return plan{}, fmt.Errorf("listener %s: %w", l.GetName(), err)
		}
		p.listeners = append(p.listeners, pl)
	}
	return p, nil
}

func readListener(l *listenerv3.Listener, clusters map[string]string) (listener, error) {
	out := listener{name: l.GetName(), addr: hostPort(l.GetAddress())}
	chains := l.GetFilterChains()
	if len(chains) != 1 || len(chains[0].GetFilters()) != 1 {
		return out, fmt.Errorf("the stand-in runs one filter chain of one filter")
	}
	f := chains[0].GetFilters()[0]
	msg, err := f.GetTypedConfig().UnmarshalNew()
	if err != nil {
		return out, fmt.Errorf("filter %s: %w", f.GetName(), err)
	}
	switch cfg := msg.(type) {
	case *tcpproxyv3.TcpProxy:
		out.upstream = clusters[cfg.GetCluster()]
	case *hcmv3.HttpConnectionManager:
		for _, vh := range cfg.GetRouteConfig().GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				out.routes = append(out.routes, route{
					path:     r.GetMatch().GetPath(),
					prefix:   r.GetMatch().GetPrefix(),
					upstream: clusters[r.GetRoute().GetCluster()],
				})
			}
		}
	default:
		return out, fmt.Errorf("filter %s: the stand-in does not implement %s", f.GetName(), f.GetTypedConfig().GetTypeUrl())
	}
	return out, nil
}

func hostPort(a *corev3.Address) string {
	sa := a.GetSocketAddress()
	if sa == nil {
		return ""
	}
	return net.JoinHostPort(sa.GetAddress(), strconv.Itoa(int(sa.GetPortValue())))
}
