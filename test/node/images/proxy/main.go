// Command proxy stands in for Envoy in the node's tests, where no Envoy
// image can be had. It is installed as /usr/local/bin/envoy and runs what
// the injected sidecar runs: Envoy's flags (--concurrency, --mode,
// --disable-hot-restart, --drain-time-s, --config-yaml), the bootstrap as
// the kubelet handed it (its $(VAR)s expanded), read with Envoy's own API
// (go-control-plane) and refused as Envoy would refuse it. It binds the
// listeners the bootstrap names: a tcp_proxy filter forwards TCP to its
// cluster's endpoint, an http_connection_manager answers its routes by
// proxying to their clusters, the admin address serves /ready (200 LIVE
// once every listener is bound) and /stats/prometheus, where the process
// also reports what it may do (package identity).
//
// It binds its listeners a second after it starts, as an Envoy loading a
// bootstrap takes a moment, so that an app started before the proxy was
// ready shows in the container start times.
//
// As Envoy's, the admin API takes POST /healthcheck/fail, after which
// /ready answers 503 DRAINING while the listeners go on accepting and
// proxying, and POST /healthcheck/ok, which makes it LIVE again; either
// asked with another method is refused (405) and changes nothing. On
// SIGTERM or SIGINT it exits 0 at once, as Envoy does: it drains no
// listener and waits for no open connection, whatever --drain-time-s
// says (a flag it takes, as Envoy does, and does not use).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// startDelay is how long the proxy waits before binding its listeners.
const startDelay = time.Second

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("proxy: ")
	if err := run(os.Args[1:]); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// brokenEnv, set in the image (the broken tag's build), makes the
// stand-in exit 1 at once: an image that never becomes ready, as a bad
// release of a proxy would, for the tests of rollbacks.
const brokenEnv = "KINJECT_STANDIN_BROKEN"

func run(args []string) error {
	if why := os.Getenv(brokenEnv); why != "" {
		return fmt.Errorf("broken image: %s", why)
	}
	fs := flag.NewFlagSet("envoy", flag.ContinueOnError)
	concurrency := fs.Int("concurrency", 2, "worker threads (accepted; the stand-in uses Go's scheduler)")
	mode := fs.String("mode", "serve", "serve, or validate: check the bootstrap and exit")
	fs.Bool("disable-hot-restart", false, "accepted: the stand-in never hot restarts")
	fs.Int("drain-time-s", 5, "accepted: the stand-in, as Envoy on SIGTERM, exits at once")
	configYAML := fs.String("config-yaml", "", "the bootstrap, YAML")
	// A bad flag is one error line, as from Envoy, not a usage page.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *concurrency < 1 {
		return fmt.Errorf("--concurrency %d: must be at least 1", *concurrency)
	}
	if *configYAML == "" {
		return errors.New("no bootstrap: --config-yaml is empty")
	}
	p, err := readBootstrap([]byte(*configYAML))
	if err != nil {
		return err
	}
	switch *mode {
	case "validate":
		log.Print("configuration is valid")
		return nil
	case "serve":
	default:
		return fmt.Errorf("--mode %q: want serve or validate", *mode)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case sig := <-sigs:
		log.Printf("got %s before starting: exiting", sig)
		return nil
	case <-time.After(startDelay):
	}
	s, err := start(p)
	if err != nil {
		return err
	}
	log.Printf("live: admin on %s, listeners %v", p.admin, p.listenerNames())
	sig := <-sigs
	// As Envoy: no draining, no waiting for open connections.
	log.Printf("got %s: exiting", sig)
	s.close()
	return nil
}
