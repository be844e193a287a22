package node

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// shimDir is where containerd 1.6's shims put their sockets, whatever
// the containerd: the node's and Docker's share it.
const shimDir = "/run/containerd/s"

// shimsOf finds the shims of the containerd whose socket is socket (they
// name it on their command line) and the sockets they listen on.
func shimsOf(socket string) (pids []string, sockets []string) {
	bound := boundSockets()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") || !containsArg(args, socket) {
			continue
		}
		pids = append(pids, e.Name())
		fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if path := bound[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")]; strings.HasPrefix(path, shimDir+"/") {
				sockets = append(sockets, path)
			}
		}
	}
	return pids, sockets
}

// boundSockets maps the inode of every bound unix socket to its path
// (/proc/net/unix).
func boundSockets() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return out
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		if fields := strings.Fields(s.Text()); len(fields) == 8 {
			out[fields[6]] = fields[7]
		}
	}
	return out
}

// liveShimSockets lists the sockets in shimDir that a process listens on.
func liveShimSockets() []string {
	var out []string
	for _, path := range boundSockets() {
		if strings.HasPrefix(path, shimDir+"/") {
			out = append(out, filepath.Base(path))
		}
	}
	return out
}

// killShims kills, by PID, the shims of the containerd whose socket is
// socket, which outlive containerd by design, and removes their sockets
// (a killed shim leaves its socket behind).
func killShims(socket string) {
	pids, sockets := shimsOf(socket)
	for _, pid := range pids {
		killPid(pid)
	}
	for _, s := range sockets {
		_ = os.Remove(s)
	}
}
