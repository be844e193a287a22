package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kinject/kubectl-inject/internal/envoycheck"
	"github.com/kinject/kubectl-inject/pkg/inject"
)

// sidecar is the embedded default's sidecar, injected into a Pod whose
// app listens on 3000.
func sidecar(t *testing.T) map[string]any {
	t.Helper()
	in, err := inject.New(inject.DefaultTemplate(), inject.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: app, image: a, ports: [{containerPort: 3000}]}\n"
	out, entries := in.ProcessText(inject.OpInject, []byte(pod), 0)
	if len(entries) != 1 || entries[0].Action != inject.Injected {
		t.Fatalf("entries %v", entries)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(out, &obj); err != nil {
		t.Fatal(err)
	}
	c := envoycheck.Sidecar(obj["spec"].(map[string]any))
	if c == nil {
		t.Fatalf("no sidecar in\n%s", out)
	}
	return c
}

// TestDefaultSidecar runs the stand-in with the arguments the kubelet
// gives the default sidecar ($(VAR)s expanded from its env): it takes
// every flag, and plans the listeners the bootstrap names.
func TestDefaultSidecar(t *testing.T) {
	args := envoycheck.ExpandArgs(sidecar(t))
	if err := run(append(slices.Clone(args), "--mode=validate")); err != nil {
		t.Fatalf("the stand-in refuses the default's arguments: %v", err)
	}
	p, err := readBootstrap([]byte(envoycheck.FlagValue(args, "--config-yaml")))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("admin %s; %v", p.admin, p.listeners)
	want := "admin 127.0.0.1:9901; [{app 0.0.0.0:10000 127.0.0.1:3000 []} {stats 0.0.0.0:9902  [{/ready  127.0.0.1:9901} {/stats/prometheus  127.0.0.1:9901}]}]"
	if got != want {
		t.Errorf("plan:\n got %s\nwant %s", got, want)
	}
}

// TestRefuses: what Envoy would not run, the stand-in does not either,
// so that a Pod it runs in proves the sidecar's arguments.
func TestRefuses(t *testing.T) {
	raw := sidecar(t)["args"].([]any)
	var unexpanded []string
	for _, a := range raw {
		unexpanded = append(unexpanded, fmt.Sprint(a))
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a variable left unexpanded", append(unexpanded, "--mode=validate"), "reading the bootstrap"},
		{"an unknown flag", []string{"--no-such-flag"}, "not defined"},
		{"no bootstrap", []string{"--mode", "validate"}, "no bootstrap"},
		{"an unknown mode", []string{"--mode", "fly", "--config-yaml", "admin: {address: {socket_address: {address: 127.0.0.1, port_value: 9901}}}"}, "--mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestBrokenImage: the broken tag's stand-in exits at once, whatever its
// flags, naming why.
func TestBrokenImage(t *testing.T) {
	t.Setenv(brokenEnv, "a bad release")
	if err := run([]string{"--config-yaml", "{}"}); err == nil || !strings.Contains(err.Error(), "a bad release") {
		t.Errorf("run: %v, want the broken image's error", err)
	}
}

// freeAddr is a loopback address with a port no one listened on a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// echoUpstream is a TCP upstream that sends back every byte it gets.
func echoUpstream(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// bootstrapYAML has the admin address on admin and one tcp_proxy
// listener on listen forwarding to upstream.
func bootstrapYAML(t *testing.T, admin, listen, upstream string) string {
	t.Helper()
	socket := func(addr string) string {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("{socket_address: {address: %s, port_value: %s}}", host, port)
	}
	return fmt.Sprintf(`admin:
  address: %s
static_resources:
  listeners:
  - name: app
    address: %s
    filter_chains:
    - filters:
      - name: envoy.filters.network.tcp_proxy
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
          stat_prefix: app
          cluster: app
  clusters:
  - name: app
    type: STATIC
    connect_timeout: 1s
    load_assignment:
      cluster_name: app
      endpoints:
      - lb_endpoints:
        - endpoint:
            address: %s
`, socket(admin), socket(listen), socket(upstream))
}

// startInProcess starts the proxy in the test's process with one
// tcp_proxy listener to an echo upstream; it returns the admin's URL and
// the listener's address.
func startInProcess(t *testing.T) (admin, listen string) {
	t.Helper()
	adminAddr, listen := freeAddr(t), freeAddr(t)
	p, err := readBootstrap([]byte(bootstrapYAML(t, adminAddr, listen, echoUpstream(t))))
	if err != nil {
		t.Fatal(err)
	}
	s, err := start(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return "http://" + adminAddr, listen
}

var client = &http.Client{Timeout: 2 * time.Second}

// ask sends method to url and returns the status and body.
func ask(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// expect fails the test unless method on url answers code and body.
func expect(t *testing.T, method, url string, code int, body string) {
	t.Helper()
	if gotCode, gotBody := ask(t, method, url); gotCode != code || gotBody != body {
		t.Errorf("%s %s: %d %q, want %d %q", method, url, gotCode, gotBody, code, body)
	}
}

// expectStats fails the test unless /stats/prometheus reports live and
// state as envoy_server_live and envoy_server_state.
func expectStats(t *testing.T, admin string, live, state int) {
	t.Helper()
	code, body := ask(t, http.MethodGet, admin+"/stats/prometheus")
	if code != http.StatusOK {
		t.Fatalf("/stats/prometheus: %d %s", code, body)
	}
	for _, line := range []string{fmt.Sprintf("envoy_server_live %d\n", live), fmt.Sprintf("envoy_server_state %d\n", state)} {
		if !strings.Contains(body, line) {
			t.Errorf("/stats/prometheus has no line %q:\n%s", line, body)
		}
	}
}

// proxied opens a connection through the listener at addr and checks
// that it reaches the echo upstream; the caller closes it.
func proxied(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("connecting through the proxy: %v", err)
	}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		c.Close()
		t.Fatal(err)
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || got != "ping\n" {
		c.Close()
		t.Fatalf("through the proxy: read %q, %v; want the upstream's echo %q", got, err, "ping\n")
	}
	_ = c.SetDeadline(time.Time{})
	return c
}

// TestHealthCheckFail: POST /healthcheck/fail fails /ready (503
// DRAINING) but, as in Envoy, the listener still accepts and proxies;
// POST /healthcheck/ok makes the proxy LIVE again.
func TestHealthCheckFail(t *testing.T) {
	admin, listen := startInProcess(t)
	expect(t, http.MethodGet, admin+"/ready", http.StatusOK, "LIVE\n")
	expectStats(t, admin, 1, 0)

	expect(t, http.MethodPost, admin+"/healthcheck/fail", http.StatusOK, "OK\n")
	expect(t, http.MethodGet, admin+"/ready", http.StatusServiceUnavailable, "DRAINING\n")
	expectStats(t, admin, 0, 1)
	proxied(t, listen).Close()

	expect(t, http.MethodPost, admin+"/healthcheck/ok", http.StatusOK, "OK\n")
	expect(t, http.MethodGet, admin+"/ready", http.StatusOK, "LIVE\n")
	expectStats(t, admin, 1, 0)
	proxied(t, listen).Close()
}

// TestHealthCheckNeedsPost: the mutating endpoints asked with another
// method than POST answer 405 and change nothing, as Envoy's do.
func TestHealthCheckNeedsPost(t *testing.T) {
	admin, _ := startInProcess(t)
	for _, method := range []string{http.MethodGet, http.MethodPut} {
		code, _ := ask(t, method, admin+"/healthcheck/fail")
		if code != http.StatusMethodNotAllowed {
			t.Errorf("%s /healthcheck/fail: %d, want 405", method, code)
		}
		expect(t, http.MethodGet, admin+"/ready", http.StatusOK, "LIVE\n")
	}

	expect(t, http.MethodPost, admin+"/healthcheck/fail", http.StatusOK, "OK\n")
	if code, _ := ask(t, http.MethodGet, admin+"/healthcheck/ok"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /healthcheck/ok: %d, want 405", code)
	}
	expect(t, http.MethodGet, admin+"/ready", http.StatusServiceUnavailable, "DRAINING\n")
}

// TestSIGTERMExitsAtOnce: the built binary, with a connection open
// through its listener and --drain-time-s 5, exits 0 within 500ms of
// SIGTERM, as Envoy does, and the connection ends with it.
func TestSIGTERMExitsAtOnce(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "envoy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	adminAddr, listen := freeAddr(t), freeAddr(t)
	admin := "http://" + adminAddr
	cmd := exec.Command(bin, "--drain-time-s", "5", "--config-yaml", bootstrapYAML(t, adminAddr, listen, echoUpstream(t)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := client.Get(admin + "/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the proxy exited before it was ready: %v\n%s", err, &stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 10s:\n%s", &stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c := proxied(t, listen)
	defer c.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("exit: %v, want 0\n%s", err, &stderr)
		}
		t.Logf("exited %v after SIGTERM", time.Since(sent))
	case <-time.After(500 * time.Millisecond):
		t.Fatalf("still running 500ms after SIGTERM with a connection open:\n%s", &stderr)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the proxied connection outlived the proxy: read %d, %v", n, err)
	}
}
