package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kinject/kubectl-inject/test/node/images/identity"
)

// state is the server's state, numbered as Envoy numbers it in its
// server.state gauge.
type state int

const (
	live state = iota
	draining
	preInitializing
	initializing
)

func (st state) String() string {
	switch st {
	case live:
		return "LIVE"
	case draining:
		return "DRAINING"
	case preInitializing:
		return "PRE_INITIALIZING"
	case initializing:
		return "INITIALIZING"
	}
	return fmt.Sprintf("state(%d)", int(st))
}

// server is the running proxy: the admin API and the listeners.
type server struct {
	// initialized is set once every listener is bound.
	initialized atomic.Bool
	// hcFailed is set by POST /healthcheck/fail and cleared by POST
	// /healthcheck/ok: the server is then DRAINING, as Envoy is, while
	// its listeners go on accepting and proxying.
	hcFailed   atomic.Bool
	firstReady atomic.Int64
	// closers are the admin server and every listener, for close.
	closers []io.Closer
}

// state is what /ready answers, worked out as Envoy does: not yet
// initialized, then a failed health check, then LIVE.
func (s *server) state() state {
	switch {
	case !s.initialized.Load():
		return preInitializing
	case s.hcFailed.Load():
		return draining
	}
	return live
}

// start binds the admin address and every listener; a port taken is an
// error, as it is to Envoy.
func start(p plan) (*server, error) {
	s := &server{}
	fail := func(err error) (*server, error) {
		s.close()
		return nil, err
	}
	ln, err := net.Listen("tcp", p.admin)
	if err != nil {
		return fail(fmt.Errorf("binding the admin address: %w", err))
	}
	admin := &http.Server{Handler: s.adminMux(), ReadHeaderTimeout: 5 * time.Second}
	s.closers = append(s.closers, admin)
	go serveHTTP(admin, ln, "admin")

	for _, l := range p.listeners {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fail(fmt.Errorf("binding listener %s: %w", l.name, err))
		}
		if l.upstream != "" {
			s.closers = append(s.closers, ln)
			go forward(ln, l.upstream)
			continue
		}
		srv := &http.Server{Handler: routes(l.routes), ReadHeaderTimeout: 5 * time.Second}
		s.closers = append(s.closers, srv)
		go serveHTTP(srv, ln, l.name)
	}
	s.initialized.Store(true)
	return s, nil
}

// close stops the admin API and every listener at once, closing the
// HTTP connections they hold: no draining, as Envoy on SIGTERM. Open TCP
// proxy connections end with the process.
func (s *server) close() {
	for _, c := range s.closers {
		_ = c.Close()
	}
}

func serveHTTP(srv *http.Server, ln net.Listener, name string) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Printf("listener %s: %v", name, err)
	}
}

// adminMux serves the admin API: /ready, /healthcheck/fail,
// /healthcheck/ok and /stats/prometheus.
func (s *server) adminMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		st := s.state()
		if st != live {
			http.Error(w, st.String(), http.StatusServiceUnavailable)
			return
		}
		s.firstReady.CompareAndSwap(0, time.Now().UnixNano())
		fmt.Fprintln(w, st)
	})
	// Envoy fails its health checks on POST /healthcheck/fail, and only
	// them: its listeners keep accepting. It refuses a mutating admin
	// endpoint asked with any other method.
	mux.HandleFunc("/healthcheck/fail", s.setHealthCheck(true))
	mux.HandleFunc("/healthcheck/ok", s.setHealthCheck(false))
	mux.HandleFunc("/stats/prometheus", func(w http.ResponseWriter, r *http.Request) {
		id, err := identity.Read()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		st := s.state()
		isLive := 0
		if st == live {
			isLive = 1
		}
		fmt.Fprintf(w, "envoy_server_live %d\n", isLive)
		fmt.Fprintf(w, "envoy_server_state %d\n", int(st))
		// When /ready first answered 200: the moment a startupProbe
		// could pass, which the app's start must follow.
		fmt.Fprintf(w, "standin_first_ready_unix_nanos %d\n", s.firstReady.Load())
		id.WritePrometheus(w, "standin")
	})
	return mux
}

// setHealthCheck answers POST by failing the health checks (fail) or
// passing them again, and any other method with 405, changing nothing.
func (s *server) setHealthCheck(fail bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "This admin endpoint requires POST", http.StatusMethodNotAllowed)
			return
		}
		s.hcFailed.Store(fail)
		fmt.Fprintln(w, "OK")
	}
}

// routes answers each route by proxying to its upstream, and 404 for a
// path no route matches, as Envoy's router does.
func routes(rs []route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range rs {
			if (rt.path != "" && r.URL.Path == rt.path) || (rt.path == "" && strings.HasPrefix(r.URL.Path, rt.prefix)) {
				proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: rt.upstream})
				proxy.ServeHTTP(w, r)
				return
			}
		}
		http.NotFound(w, r)
	})
}

// forward accepts connections on ln and copies each to and from upstream
// until either side closes.
func forward(ln net.Listener, upstream string) {
	for {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer down.Close()
			up, err := net.DialTimeout("tcp", upstream, time.Second)
			if err != nil {
				log.Printf("connecting to %s: %v", upstream, err)
				return
			}
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, down); closeWrite(up); done <- struct{}{} }()
			go func() { _, _ = io.Copy(down, up); closeWrite(down); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
