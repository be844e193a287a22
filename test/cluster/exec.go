package cluster

import (
	"context"
	"time"
)

// Process is a program started by StartProcess, for harnesses beside
// this one (test/node's kubelet and containerd): it runs in its own
// process group and the kernel kills it when the test binary dies.
type Process struct{ p *process }

// StartProcess starts bin with args, its output to the file logPath and
// env added to the test binary's environment.
func StartProcess(bin string, args []string, logPath string, env ...string) (*Process, error) {
	p, err := startProcess(bin, args, logPath, env...)
	if err != nil {
		return nil, err
	}
	return &Process{p: p}, nil
}

// Stop sends SIGTERM to the process group, then SIGKILL after 10 s, and
// waits for the process. It is safe on nil and on a process that exited.
func (p *Process) Stop() {
	if p != nil {
		p.p.stop()
	}
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.p.done }

// WaitHealthy polls url (https without verification, or http) until it
// answers 200, the process exits, or timeout passes.
func WaitHealthy(ctx context.Context, p *Process, url string, timeout time.Duration) error {
	return waitHealthy(ctx, p.p, url, "", timeout)
}

// FindBinary finds a program as the cluster finds its own: $env, then
// the tool cache, then PATH; the error wraps ErrMissingBinaries.
func FindBinary(env, name string) (string, error) { return findBinary(env, name) }

// FreePorts returns n distinct free TCP ports on 127.0.0.1.
func FreePorts(n int) ([]int, error) { return freePorts(n) }

// Tail returns the last n lines of the file at path.
func Tail(path string, n int) string { return tail(path, n) }
