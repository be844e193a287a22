package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinject/kubectl-inject/test/node/images/identity"
)

// server is the running proxy: the admin API and the listeners.
type server struct {
	// state is what /ready answers: LIVE or DRAINING.
	state      atomic.Value
	firstReady atomic.Int64
	admin      *http.Server
	http       []*http.Server
	tcp        []net.Listener
	// conns counts the open TCP proxy connections, which drain waits for.
	conns sync.WaitGroup
}

// start binds the admin address and every listener; a port taken is an
// error, as it is to Envoy.
func start(p plan) (*server, error) {
	s := &server{}
	s.state.Store("PRE_INITIALIZING")
	var bound []net.Listener
	fail := func(err error) (*server, error) {
		for _, l := range bound {
			l.Close()
		}
		return nil, err
	}
	ln, err := net.Listen("tcp", p.admin)
	if err != nil {
		return fail(fmt.Errorf("binding the admin address: %w", err))
	}
	bound = append(bound, ln)
	s.admin = &http.Server{Handler: s.adminMux(), ReadHeaderTimeout: 5 * time.Second}
	go serveHTTP(s.admin, ln, "admin")

	for _, l := range p.listeners {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fail(fmt.Errorf("binding listener %s: %w", l.name, err))
		}
		bound = append(bound, ln)
		if l.upstream != "" {
			s.tcp = append(s.tcp, ln)
			go s.forward(ln, l.upstream)
			continue
		}
		srv := &http.Server{Handler: routes(l.routes), ReadHeaderTimeout: 5 * time.Second}
		s.http = append(s.http, srv)
		go serveHTTP(srv, ln, l.name)
	}
	s.state.Store("LIVE")
	return s, nil
}

func serveHTTP(srv *http.Server, ln net.Listener, name string) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Printf("listener %s: %v", name, err)
	}
}

// adminMux serves the admin API: /ready and /stats/prometheus.
func (s *server) adminMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		state := s.state.Load().(string)
		if state != "LIVE" {
			http.Error(w, state, http.StatusServiceUnavailable)
			return
		}
		s.firstReady.CompareAndSwap(0, time.Now().UnixNano())
		fmt.Fprintln(w, state)
	})
	mux.HandleFunc("/stats/prometheus", func(w http.ResponseWriter, r *http.Request) {
		id, err := identity.Read()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		live := 0
		if s.state.Load() == "LIVE" {
			live = 1
		}
		fmt.Fprintf(w, "envoy_server_live %d\n", live)
		// When /ready first answered 200: the moment a startupProbe
		// could pass, which the app's start must follow.
		fmt.Fprintf(w, "standin_first_ready_unix_nanos %d\n", s.firstReady.Load())
		id.WritePrometheus(w, "standin")
	})
	return mux
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
func (s *server) forward(ln net.Listener, upstream string) {
	for {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
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

// drain fails /ready, stops accepting, and waits for open connections
// for at most d.
func (s *server) drain(d time.Duration) {
	s.state.Store("DRAINING")
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for _, ln := range s.tcp {
		ln.Close()
	}
	var wg sync.WaitGroup
	for _, srv := range s.http {
		wg.Add(1)
		go func() { defer wg.Done(); _ = srv.Shutdown(ctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.conns.Wait() }()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		log.Printf("drain time over with connections open")
	}
	_ = s.admin.Close()
}
