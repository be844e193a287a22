package cluster

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group and has the kernel kill
// it when the test binary dies, so no etcd or kube-apiserver outlives a run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func terminate(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

func kill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
