// Package identity reports what a process may do, read from inside its
// container: its user, its capabilities, no_new_privs, seccomp, and
// whether it can write to its root filesystem. The node's images serve it
// so that a test proves what the kubelet and the runtime enforced rather
// than what the Pod asked for.
package identity

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Identity is what the process found about itself.
type Identity struct {
	UID, GID int
	// CapEff and CapBnd are the effective and bounding capability sets
	// (/proc/self/status), as numbers: 0 is none.
	CapEff, CapBnd uint64
	NoNewPrivs     bool
	// Seccomp is the seccomp mode: 0 off, 2 a filter.
	Seccomp int
	// RootWritable says whether a file could be created in /.
	RootWritable bool
}

// Read reads the identity of the calling process.
func Read() (Identity, error) {
	id := Identity{UID: os.Getuid(), GID: os.Getgid()}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return id, fmt.Errorf("read /proc/self/status: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		value = strings.TrimSpace(value)
		switch key {
		case "CapEff":
			id.CapEff, err = strconv.ParseUint(value, 16, 64)
		case "CapBnd":
			id.CapBnd, err = strconv.ParseUint(value, 16, 64)
		case "NoNewPrivs":
			id.NoNewPrivs = value == "1"
		case "Seccomp":
			id.Seccomp, err = strconv.Atoi(value)
		}
		if err != nil {
			return id, fmt.Errorf("parse %s in /proc/self/status: %w", key, err)
		}
	}
	if err := s.Err(); err != nil {
		return id, fmt.Errorf("read /proc/self/status: %w", err)
	}
	if f, err := os.CreateTemp("/", ".write-test-"); err == nil {
		id.RootWritable = true
		f.Close()
		os.Remove(f.Name())
	}
	return id, nil
}

// WritePrometheus writes the identity as Prometheus gauges named
// prefix_uid, prefix_gid, prefix_cap_effective, prefix_cap_bounding,
// prefix_no_new_privs, prefix_seccomp_mode and prefix_root_writable.
func (id Identity) WritePrometheus(w io.Writer, prefix string) {
	for _, g := range []struct {
		name  string
		value uint64
	}{
		{"uid", uint64(id.UID)}, {"gid", uint64(id.GID)},
		{"cap_effective", id.CapEff}, {"cap_bounding", id.CapBnd},
		{"no_new_privs", boolValue(id.NoNewPrivs)}, {"seccomp_mode", uint64(id.Seccomp)},
		{"root_writable", boolValue(id.RootWritable)},
	} {
		fmt.Fprintf(w, "%s_%s %d\n", prefix, g.name, g.value)
	}
}

func boolValue(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
