package node

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Host paths the kubelet, containerd and CNI write whatever their
// configuration says: the kubelet's device plugin directory and
// container log links, libcni's cache, containerd 1.6's shim sockets.
// The others are where they would write by default, watched in case a
// setting is lost.
var hostPaths = []string{
	"/var/lib/kubelet", "/var/lib/kubelet/device-plugins", "/var/log/containers", "/var/log/pods",
	"/var/lib/cni", "/etc/cni", "/opt/cni", "/run/netns",
	"/run/containerd", "/run/containerd/s", "/var/lib/containerd", "/opt/containerd",
	"/etc/kubernetes", "/var/run/kubernetes",
}

// sysctls are the kernel settings the kubelet changes at start
// (kernel.panic=10, kernel.panic_on_oops=1, vm.overcommit_memory=1) and
// those the CNI bridge may turn on, for IPv4 and IPv6.
var sysctls = []string{
	"kernel.panic", "kernel.panic_on_oops", "vm.overcommit_memory",
	"net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables",
	"net.ipv6.conf.all.forwarding", "net.bridge.bridge-nf-call-ip6tables",
}

// Snapshot is the part of the host a node changes, taken before Start
// and compared after Stop: Stop must leave it as it found it.
type Snapshot struct {
	// Paths says which of hostPaths exist: Stop removes those that did
	// not. Files is every path under them, with its mode, and the size
	// and content hash of a file; Truncated the roots whose walk stopped
	// at its bound.
	Paths     map[string]bool      `json:"paths"`
	Files     map[string]FileState `json:"files"`
	Truncated []string             `json:"truncated,omitempty"`
	// LiveShims are the sockets in shimDir a process listens on. Docker's
	// containerd puts its shims' sockets there too, whenever another test
	// starts a container.
	LiveShims []string          `json:"liveShims"`
	Sysctls   map[string]string `json:"sysctls"`
	// Mounts are the mount points, Cgroups the kubepods cgroups of
	// every hierarchy, Links the network interfaces, Routes the IPv4 and
	// IPv6 routes of every routing table. Network namespaces are files
	// under /run/netns.
	Mounts  []string `json:"mounts"`
	Cgroups []string `json:"cgroups"`
	Links   []string `json:"links"`
	Routes  []string `json:"routes"`
	// Tables are the iptables tables of both families and both backends
	// (readTables).
	Tables map[string]Table `json:"tables"`
	// Processes are those in a kubepods cgroup: containers.
	Processes []string `json:"processes"`
}

// Docker's own containers come and go on a shared machine while a node
// runs; their mounts are left out of the comparison.
var dockerMounts = []string{"/var/lib/docker/", "/run/docker/", "/var/run/docker/"}

// TakeSnapshot reads the host's state.
func TakeSnapshot() (*Snapshot, error) {
	s := &Snapshot{Paths: map[string]bool{}, Sysctls: map[string]string{}}
	for _, p := range hostPaths {
		_, err := os.Lstat(p)
		s.Paths[p] = err == nil
	}
	s.Files, s.Truncated = snapshotFiles(hostPaths, maxWalkEntries)
	s.LiveShims = liveShimSockets()
	for _, k := range sysctls {
		v, err := readSysctl(k)
		if err != nil {
			continue // a module not loaded: nothing to change either
		}
		s.Sysctls[k] = v
	}
	var err error
	if s.Mounts, err = mountPoints(); err != nil {
		return nil, err
	}
	s.Cgroups = kubepodsCgroups()
	var docker map[string]bool
	if s.Links, docker, err = links(); err != nil {
		return nil, err
	}
	s.Routes = routes(docker)
	if s.Tables, err = readTables(runSave); err != nil {
		return nil, err
	}
	s.Processes = podProcesses()
	return s, nil
}

// Diff lists how after differs from s, one line each: paths added,
// removed or changed, iptables lines added (+) or removed (-), sysctls,
// mounts, cgroups, links, routes and container processes; none when the
// host is as s found it.
func (s *Snapshot) Diff(after *Snapshot) []string {
	out := diffFiles(s, after)
	for _, k := range sysctls {
		if s.Sysctls[k] != after.Sysctls[k] {
			out = append(out, fmt.Sprintf("sysctl %s: was %q, now %q", k, s.Sysctls[k], after.Sysctls[k]))
		}
	}
	for _, l := range []struct {
		what          string
		before, after []string
	}{
		{"mount", s.Mounts, after.Mounts},
		{"cgroup", s.Cgroups, after.Cgroups},
		{"link", s.Links, after.Links},
		{"route", s.Routes, after.Routes},
		{"container process", s.Processes, after.Processes},
	} {
		for _, x := range minus(l.after, l.before) {
			out = append(out, fmt.Sprintf("new %s: %s", l.what, x))
		}
		for _, x := range minus(l.before, l.after) {
			out = append(out, fmt.Sprintf("%s gone: %s", l.what, x))
		}
	}
	return append(out, diffTables(s.Tables, after.Tables)...)
}

// minus is a without the elements of b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(sysctlPath(key))
	if err != nil {
		return "", fmt.Errorf("read sysctl %s: %w", key, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func writeSysctl(key, value string) error {
	if err := os.WriteFile(sysctlPath(key), []byte(value), 0o644); err != nil {
		return fmt.Errorf("restore sysctl %s=%s: %w", key, value, err)
	}
	return nil
}

// mountPoints lists the mount points of this mount namespace, in
// mount order.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		// id parent major:minor root mountpoint ...
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if !slices.ContainsFunc(dockerMounts, func(prefix string) bool { return strings.HasPrefix(p, prefix) }) {
			out = append(out, p)
		}
	}
	return out, s.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(p string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(p)
}

// cgroupRoots are the mount points of the cgroup hierarchies.
func cgroupRoots() []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 2 && (f[2] == "cgroup" || f[2] == "cgroup2") {
			out = append(out, f[1])
		}
	}
	return out
}

// kubepodsCgroups lists every kubepods cgroup directory (the kubelet's,
// in each hierarchy), deepest first.
func kubepodsCgroups() []string {
	var out []string
	for _, root := range cgroupRoots() {
		top := filepath.Join(root, "kubepods")
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool { return strings.Count(out[i], "/") > strings.Count(out[j], "/") })
	return out
}

// podProcesses lists the processes in a kubepods cgroup (pid and
// command), that is containers of a node.
func podProcesses() []string {
	var out []string
	for _, pid := range kubepodsPids() {
		cmd, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		out = append(out, pid+" "+strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
	}
	return out
}

// kubepodsPids lists the processes whose cgroup (in any hierarchy) is
// under /kubepods, but zombies: those are gone but for their parent's
// wait.
func kubepodsPids() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err != nil || !strings.Contains(string(b), ":/kubepods") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		// pid (comm) state ...: comm may hold spaces, the state follows
		// its last parenthesis.
		if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
