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
// ready shows in the container start times. On SIGTERM or SIGINT it
// drains as Envoy does: /ready answers 503, listeners stop accepting,
// open connections get up to --drain-time-s to finish, then it exits 0.
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
	drain := fs.Int("drain-time-s", 5, "seconds open connections get to finish after SIGTERM")
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
	log.Printf("got %s: draining for at most %ds", sig, *drain)
	s.drain(time.Duration(*drain) * time.Second)
	log.Print("exiting")
	return nil
}
