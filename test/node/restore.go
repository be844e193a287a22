package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// restore puts the host back as before found it, once the kubelet and
// containerd are stopped: container processes killed, mounts under dir
// unmounted, new kubepods cgroups, the bridge and the iptables rule
// removed, sysctls restored, new host paths and dir removed. It goes on
// after a failure and returns every error.
func restore(before *Snapshot, dir, socket string) error {
	var errs []error
	killShims(socket)
	// A run killed mid-way leaves container processes whose shim is gone.
	for range 25 {
		pids := kubepodsPids()
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			killPid(pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if dir != "" {
		errs = append(errs, unmountUnder(dir))
	}
	errs = append(errs, removeCgroups(before))
	errs = append(errs, tearDownNetwork())
	for k, v := range before.Sysctls {
		if now, err := readSysctl(k); err == nil && now != v {
			errs = append(errs, writeSysctl(k, v))
		}
	}
	errs = append(errs, unlinkCadvisorSocket(dir))
	errs = append(errs, removeNewPaths(before))
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove node dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// removeCgroups removes the kubepods cgroups that are new, deepest
// first. A cgroup is busy until its killed processes are gone: it is
// tried again for a few seconds.
func removeCgroups(before *Snapshot) error {
	var err error
	for range 25 {
		err = nil
		for _, cg := range kubepodsCgroups() {
			if slices.Contains(before.Cgroups, cg) {
				continue
			}
			if e := syscall.Rmdir(cg); e != nil && !errors.Is(e, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("remove cgroup %s: %w", cg, e))
			}
		}
		if err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// unmountUnder unmounts every mount point under dir, deepest first
// (container root filesystems, Pod volumes, network namespaces).
func unmountUnder(dir string) error {
	mounts, err := mountPoints()
	if err != nil {
		return err
	}
	var under []string
	for _, m := range mounts {
		if m == dir || strings.HasPrefix(m, dir+"/") {
			under = append(under, m)
		}
	}
	sort.Slice(under, func(i, j int) bool { return strings.Count(under[i], "/") > strings.Count(under[j], "/") })
	var errs []error
	for _, m := range under {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// removeNewPaths removes the host paths that did not exist before. The
// shims' directory, shared with Docker's containerd, is removed only
// when empty: killShims removed the node's sockets.
func removeNewPaths(before *Snapshot) error {
	var errs []error
	for _, p := range hostPaths {
		if before.Paths[p] {
			continue
		}
		if p == shimDir || p == filepath.Dir(shimDir) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	for _, dir := range []string{shimDir, filepath.Dir(shimDir)} {
		if !before.Paths[dir] {
			_ = os.Remove(dir) // fails when not empty: another containerd uses it
		}
	}
	return errors.Join(errs...)
}
