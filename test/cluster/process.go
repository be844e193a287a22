package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// ErrMissingBinaries is wrapped by Start's error when etcd, kube-apiserver
// or, for a control plane, kube-controller-manager, kube-scheduler or kwok
// cannot be found.
var ErrMissingBinaries = errors.New("live cluster binaries missing: run hack/build-apiserver.sh (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl) and hack/install-tools.sh (etcd, kwok)")

// findBinary looks name up in $env, then the cache's bin dir, then PATH.
func findBinary(env, name string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable: %w", env, p, ErrMissingBinaries)
	}
	p, err := testbin.FindTool(name)
	if err != nil {
		return "", fmt.Errorf("$%s not set and %w: %w", env, err, ErrMissingBinaries)
	}
	return p, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		defer l.Close() // keep open until all are picked, so they differ
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func startProcess(bin string, args []string, logPath string, env ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM to the process group, then SIGKILL after 10s.
func (p *process) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	terminate(p.cmd.Process)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		kill(p.cmd.Process)
		<-p.done
	}
}

// waitHealthy polls url until it answers 200, the process exits, or timeout.
func waitHealthy(ctx context.Context, p *process, url, token string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed test server
	}
	defer client.CloseIdleConnections()
	last := errors.New("no answer yet")
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("build request: %w", err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if resp, err := client.Do(req); err != nil {
			last = err
		} else {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s: %s", url, resp.Status)
		}
		select {
		case <-p.done:
			return fmt.Errorf("process exited: %v (last: %w)", p.err, last)
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
