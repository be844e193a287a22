// Command app is the workload of the node's tests. By default it serves
// HTTP on -listen: / answers "app started=UNIXNANO state=serving" (the
// state turns "terminating" once it got SIGTERM), /identity answers what
// the process may do (package identity). On SIGTERM it logs, keeps
// serving for -term-delay, then exits 0, as an app finishing its
// requests does; with -exit-after it exits 0 on its own after that long,
// as a Job's work does.
//
// With -get URL it is a client instead: it asks URL until it gets a 200
// (at most -attempts times, a second apart), writes the answer to stdout
// and to the termination message, and exits 0, or 1 when it got none.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kinject/kubectl-inject/test/node/images/identity"
)

func main() {
	listen := flag.String("listen", ":8080", "address to serve HTTP on")
	exitAfter := flag.Duration("exit-after", 0, "exit 0 after this long (0: serve until SIGTERM)")
	termDelay := flag.Duration("term-delay", 0, "keep serving this long after SIGTERM")
	get := flag.String("get", "", "be a client: GET this URL and exit")
	attempts := flag.Int("attempts", 30, "with -get: how many times to try")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if *get != "" {
		os.Exit(client(*get, *attempts))
	}
	if err := serve(*listen, *exitAfter, *termDelay); err != nil {
		log.Fatal(err)
	}
}

func serve(listen string, exitAfter, termDelay time.Duration) error {
	started := time.Now()
	var terminating atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		state := "serving"
		if terminating.Load() {
			state = "terminating"
		}
		fmt.Fprintf(w, "app started=%d state=%s\n", started.UnixNano(), state)
	})
	mux.HandleFunc("/identity", func(w http.ResponseWriter, r *http.Request) {
		id, err := identity.Read()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		id.WritePrometheus(w, "app")
	})
	// Bound before anything else is started, so that a bad address
	// fails the container at once.
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("serve %s: %w", listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- srv.Serve(ln) }()
	log.Printf("serving on %s", listen)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var done <-chan time.Time
	if exitAfter > 0 {
		done = time.After(exitAfter)
	}
	select {
	case err := <-errs:
		return fmt.Errorf("serve %s: %w", listen, err)
	case <-done:
		log.Printf("done after %s", exitAfter)
	case sig := <-sigs:
		terminating.Store(true)
		log.Printf("got %s, serving %s more", sig, termDelay)
		time.Sleep(termDelay)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	log.Printf("exiting")
	return nil
}

func client(url string, attempts int) int {
	c := &http.Client{Timeout: 3 * time.Second}
	var last string
	for i := range attempts {
		if i > 0 {
			time.Sleep(time.Second)
		}
		resp, err := c.Get(url)
		if err != nil {
			last = err.Error()
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%s: %s", resp.Status, body)
		if err == nil && resp.StatusCode == http.StatusOK {
			fmt.Print(string(body))
			// The kubelet reads it into the container's status, where a
			// test finds it without reaching the kubelet for logs.
			_ = os.WriteFile("/dev/termination-log", body, 0o644)
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "GET %s: %s\n", url, last)
	_ = os.WriteFile("/dev/termination-log", []byte(last), 0o644)
	return 1
}
