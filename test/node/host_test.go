package node

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// The host check's own tests: snapshots of temporary directories and
// canned iptables-save and ip route output, so they need neither root
// nor a node nor iptables.

// sha is a content's hash as FileState.String prints it, computed here
// apart from hashFile.
func sha(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])[:12]
}

// write creates a file with its mode set whatever the umask.
func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "conf"), "hello", 0o640)
	if err := os.Chmod(filepath.Join(root, "a"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/conf", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// A FIFO: opening it to hash it would block the snapshot.
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A nested root is walked once, with its parent; a missing root
	// records nothing.
	nested := []string{"/var/lib/kubelet/device-plugins", "/run/containerd", "/var/lib/kubelet", "/run/containerd/s", "/var/lib/kubelet-x"}
	if got, want := walkRoots(nested), []string{"/run/containerd", "/var/lib/kubelet", "/var/lib/kubelet-x"}; !slices.Equal(got, want) {
		t.Errorf("walkRoots(%q) = %q, want %q", nested, got, want)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	files, truncated := snapshotFiles([]string{filepath.Join(root, "a"), root, missing}, 100)
	if len(truncated) != 0 {
		t.Errorf("truncated %v, want none", truncated)
	}
	rootMode := mustMode(t, root)
	want := map[string]string{
		root:                          rootMode,
		filepath.Join(root, "a"):      "drwxr-x---",
		filepath.Join(root, "a/conf"): "-rw-r----- 5 bytes sha256:" + sha("hello"),
		filepath.Join(root, "link"):   "Lrwxrwxrwx -> a/conf",
		filepath.Join(root, "fifo"):   "prw-------",
	}
	if len(files) != len(want) {
		t.Errorf("%d paths recorded, want %d: %v", len(files), len(want), files)
	}
	for p, w := range want {
		if got := files[p].String(); got != w {
			t.Errorf("%s: %q, want %q", p, got, w)
		}
	}

	// Five paths under root: a bound of 4 stops the walk and says so.
	if _, truncated := snapshotFiles([]string{root}, 4); !slices.Equal(truncated, []string{root}) {
		t.Errorf("with a bound of 4 entries, truncated %v, want [%s]", truncated, root)
	}
	if _, truncated := snapshotFiles([]string{root}, 5); len(truncated) != 0 {
		t.Errorf("with a bound of 5 entries, truncated %v, want none", truncated)
	}
}

func mustMode(t *testing.T, p string) string {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().String()
}

func TestDiffFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// change turns the tree the snapshot found into the one after;
		// want are the lines of the diff, paths relative to the root.
		change func(t *testing.T, root string)
		want   []string
	}{
		{
			name:   "unchanged",
			change: func(*testing.T, string) {},
		},
		{
			name:   "content changed, same size",
			change: func(t *testing.T, root string) { write(t, filepath.Join(root, "etc/conf"), "HELLO", 0o644) },
			want: []string{"file changed: etc/conf: -rw-r--r-- 5 bytes sha256:" + sha("hello") +
				", now -rw-r--r-- 5 bytes sha256:" + sha("HELLO")},
		},
		{
			name: "mode changed",
			change: func(t *testing.T, root string) {
				if err := os.Chmod(filepath.Join(root, "etc/conf"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"file changed: etc/conf: -rw-r--r-- 5 bytes sha256:" + sha("hello") +
				", now -rw------- 5 bytes sha256:" + sha("hello")},
		},
		{
			name:   "file added",
			change: func(t *testing.T, root string) { write(t, filepath.Join(root, "etc/new"), "x", 0o600) },
			want:   []string{"file added: etc/new (-rw------- 1 bytes sha256:" + sha("x") + ")"},
		},
		{
			name: "file removed",
			change: func(t *testing.T, root string) {
				if err := os.Remove(filepath.Join(root, "etc/conf")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"file removed: etc/conf (-rw-r--r-- 5 bytes sha256:" + sha("hello") + ")"},
		},
		{
			name: "directory added, one line for it and what it holds",
			change: func(t *testing.T, root string) {
				write(t, filepath.Join(root, "cache/results/one"), "1", 0o600)
				for _, d := range []string{"cache", "cache/results"} {
					if err := os.Chmod(filepath.Join(root, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: []string{"file added: cache (drwxr-xr-x) holding 2 entries"},
		},
		{
			name: "directory removed",
			change: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "etc")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"file removed: etc (drwxr-xr-x) holding 2 entries"},
		},
		{
			name: "symlink retargeted",
			change: func(t *testing.T, root string) {
				link := filepath.Join(root, "etc/link")
				if err := os.Remove(link); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("elsewhere", link); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"file changed: etc/link: Lrwxrwxrwx -> conf, now Lrwxrwxrwx -> elsewhere"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			write(t, filepath.Join(root, "etc/conf"), "hello", 0o644)
			if err := os.Chmod(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("conf", filepath.Join(root, "etc/link")); err != nil {
				t.Fatal(err)
			}
			snap := func() *Snapshot {
				files, truncated := snapshotFiles([]string{root}, 100)
				return &Snapshot{Files: files, Truncated: truncated}
			}
			before := snap()
			tc.change(t, root)
			got := diffFiles(before, snap())
			var want []string
			for _, w := range tc.want {
				want = append(want, relativeTo(w, root))
			}
			if !slices.Equal(got, want) {
				t.Errorf("diff:\n%q\nwant:\n%q", got, want)
			}
		})
	}
}

// relativeTo puts root before the path of a diff line written
// relative to it ("file added: etc/new ..."; "file changed: etc/conf:").
func relativeTo(line, root string) string {
	for _, verb := range []string{"file added: ", "file removed: ", "file changed: "} {
		if len(line) > len(verb) && line[:len(verb)] == verb {
			return verb + root + "/" + line[len(verb):]
		}
	}
	return line
}

func TestDiffFilesTruncated(t *testing.T) {
	t.Parallel()
	before := &Snapshot{Truncated: []string{"/var/lib/kubelet"}}
	after := &Snapshot{Truncated: []string{"/var/lib/kubelet", "/var/lib/cni"}}
	want := []string{
		"files under /var/lib/cni: too many to walk, not compared in full",
		"files under /var/lib/kubelet: too many to walk, not compared in full",
	}
	if got := diffFiles(before, after); !slices.Equal(got, want) {
		t.Errorf("diff:\n%q\nwant:\n%q", got, want)
	}
}

// TestDiffFilesShims: Docker's shims come and go in the shared socket
// directory; a socket no process listens on is a leftover.
func TestDiffFilesShims(t *testing.T) {
	t.Parallel()
	socket := FileState{Mode: "Srwx------"}
	dir := FileState{Mode: "drwx--x--x"}
	for _, tc := range []struct {
		name          string
		before, after *Snapshot
		want          []string
	}{
		{
			name:   "Docker's live shim added, with its directories",
			before: &Snapshot{},
			after: &Snapshot{LiveShims: []string{"d0cker"}, Files: map[string]FileState{
				"/run/containerd": dir, shimDir: dir, shimDir + "/d0cker": socket,
			}},
		},
		{
			name:   "Docker's shim gone",
			before: &Snapshot{LiveShims: []string{"d0cker"}, Files: map[string]FileState{shimDir + "/d0cker": socket}},
			after:  &Snapshot{},
		},
		{
			name:   "a dead socket added",
			before: &Snapshot{Files: map[string]FileState{"/run/containerd": dir, shimDir: dir}},
			after: &Snapshot{LiveShims: []string{"d0cker"}, Files: map[string]FileState{
				"/run/containerd": dir, shimDir: dir, shimDir + "/d0cker": socket, shimDir + "/n0de": socket,
			}},
			want: []string{"file added: " + shimDir + "/n0de (Srwx------)"},
		},
		{
			name:   "the directories left with no shim",
			before: &Snapshot{},
			after:  &Snapshot{Files: map[string]FileState{"/run/containerd": dir, shimDir: dir}},
			want:   []string{"file added: /run/containerd (drwx--x--x) holding 1 entries"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := diffFiles(tc.before, tc.after); !slices.Equal(got, tc.want) {
				t.Errorf("diff:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// legacySave is iptables-legacy-save's output: counters on every chain.
const legacySave = `# Generated by iptables-save v1.8.9 on Mon Dec  7 05:44:18 2026
*raw
:PREROUTING ACCEPT [6021:84742990]
:OUTPUT ACCEPT [4489:443345]
COMMIT
# Completed on Mon Dec  7 05:44:18 2026
# Generated by iptables-save v1.8.9 on Mon Dec  7 05:44:18 2026
*filter
:INPUT ACCEPT [6021:84742990]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [4489:443345]
:KUBE-FIREWALL - [0:0]
-A INPUT -j KUBE-FIREWALL
COMMIT
`

// nftSave is iptables-save's output with nf_tables and Docker's rules.
const nftSave = `# Warning: iptables-legacy tables present, use iptables-legacy-save to see them
# Generated by iptables-save v1.8.9 (nf_tables) on Mon Dec  7 05:43:54 2026
*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:DOCKER - [0:0]
-A FORWARD -j DOCKER-USER
-A FORWARD -o docker0 -j DOCKER
-A FORWARD -i kinject0 -o kinject0 -m comment --comment "kinject-node: pod to pod on kinject0" -j ACCEPT
-A FORWARD -o br-5e1d2c3b4a59 -j DOCKER
COMMIT
# Completed on Mon Dec  7 05:43:54 2026
*nat
:PREROUTING ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
COMMIT
`

func TestParseSave(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       map[string][]string
	}{
		{
			name: "legacy, counters dropped",
			text: legacySave,
			want: map[string][]string{
				"raw":    {":PREROUTING ACCEPT", ":OUTPUT ACCEPT"},
				"filter": {":INPUT ACCEPT", ":FORWARD ACCEPT", ":OUTPUT ACCEPT", ":KUBE-FIREWALL -", "-A INPUT -j KUBE-FIREWALL"},
			},
		},
		{
			name: "nf_tables, Docker's left out",
			text: nftSave,
			want: map[string][]string{
				"filter": {":INPUT ACCEPT", ":FORWARD DROP", ":OUTPUT ACCEPT",
					`-A FORWARD -i kinject0 -o kinject0 -m comment --comment "kinject-node: pod to pod on kinject0" -j ACCEPT`},
				"nat": {":PREROUTING ACCEPT", ":POSTROUTING ACCEPT"},
			},
		},
		{
			name: "a rule's counters (-c), a line outside a table",
			text: "[12:345] -A INPUT -j ACCEPT\n*mangle\n[12:345] -A INPUT -j ACCEPT\nCOMMIT\n",
			want: map[string][]string{"mangle": {"-A INPUT -j ACCEPT"}},
		},
		{
			name: "an empty table is a table",
			text: "*security\nCOMMIT\n",
			want: map[string][]string{"security": {}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := parseSave(tc.text)
			if !slices.Equal(sortedKeys(got), sortedKeys(tc.want)) {
				t.Errorf("tables %v, want %v", sortedKeys(got), sortedKeys(tc.want))
			}
			for name, w := range tc.want {
				if !slices.Equal(got[name], w) {
					t.Errorf("table %s:\n%q\nwant:\n%q", name, got[name], w)
				}
			}
		})
	}
}

func TestReadTables(t *testing.T) {
	t.Parallel()
	outputs := map[string]string{"iptables-save": nftSave, "iptables-legacy-save": legacySave}
	errs := map[string]error{
		"ip6tables-save":        errors.New("ip6tables-save: exit status 1: could not initialize ip6tables"),
		"ip6tables-legacy-save": fmt.Errorf("run: %w", &exec.Error{Name: "ip6tables-legacy-save", Err: exec.ErrNotFound}),
	}
	save := func(command string) (string, error) { return outputs[command], errs[command] }
	tables, err := readTables(save)
	if err != nil {
		t.Fatal(err)
	}
	// Four savers, five tables each, none beyond.
	if len(tables) != 4*5 {
		t.Errorf("%d tables recorded, want 20: %v", len(tables), sortedKeys(tables))
	}
	for key, want := range map[string]string{
		"iptables filter":           "",
		"iptables nat":              "",
		"iptables mangle":           "not in the kernel",
		"iptables security":         "not in the kernel",
		"iptables-legacy raw":       "",
		"iptables-legacy filter":    "",
		"iptables-legacy nat":       "not in the kernel",
		"ip6tables filter":          "ip6tables-save: exit status 1: could not initialize ip6tables",
		"ip6tables security":        "ip6tables-save: exit status 1: could not initialize ip6tables",
		"ip6tables-legacy mangle":   "ip6tables-legacy-save not installed",
		"ip6tables-legacy security": "ip6tables-legacy-save not installed",
	} {
		if got, ok := tables[key]; !ok || got.Absent != want {
			t.Errorf("%s: absent %q (recorded %t), want %q", key, got.Absent, ok, want)
		}
	}
	if got := tables["iptables-legacy filter"].Rules; len(got) != 5 {
		t.Errorf("iptables-legacy filter: %q, want its 5 lines", got)
	}

	// The node needs ip6tables-save: without it there is no snapshot.
	errs["ip6tables-save"] = &exec.Error{Name: "ip6tables-save", Err: exec.ErrNotFound}
	if _, err := readTables(save); err == nil {
		t.Error("readTables without ip6tables-save: no error")
	}
}

func TestDiffTables(t *testing.T) {
	t.Parallel()
	rule := "-A FORWARD -i kinject0 -o kinject0 -j ACCEPT"
	chains := []string{":INPUT ACCEPT", ":FORWARD DROP", ":OUTPUT ACCEPT"}
	present := func(rules ...string) Table { return Table{Rules: append(slices.Clone(chains), rules...)} }
	for _, tc := range []struct {
		name          string
		before, after map[string]Table
		want          []string
	}{
		{
			name:   "the same",
			before: map[string]Table{"ip6tables filter": present(), "iptables raw": {Absent: tableAbsent}},
			after:  map[string]Table{"ip6tables filter": present(), "iptables raw": {Absent: tableAbsent}},
		},
		{
			name:   "a rule left in IPv6",
			before: map[string]Table{"ip6tables filter": present(), "iptables filter": present()},
			after:  map[string]Table{"ip6tables filter": present(rule), "iptables filter": present()},
			want:   []string{"ip6tables filter: + " + rule},
		},
		{
			name:   "a rule removed and a chain's policy changed",
			before: map[string]Table{"iptables filter": present(rule)},
			after:  map[string]Table{"iptables filter": {Rules: []string{":INPUT ACCEPT", ":FORWARD ACCEPT", ":OUTPUT ACCEPT"}}},
			want:   []string{"iptables filter: - :FORWARD DROP", "iptables filter: + :FORWARD ACCEPT", "iptables filter: - " + rule},
		},
		{
			name:   "a table created",
			before: map[string]Table{"iptables mangle": {Absent: tableAbsent}},
			after:  map[string]Table{"iptables mangle": {Rules: []string{":KUBE-IPTABLES-HINT -"}}},
			want:   []string{"iptables mangle: table added (absent before: not in the kernel)", "iptables mangle: + :KUBE-IPTABLES-HINT -"},
		},
		{
			name:   "a table gone",
			before: map[string]Table{"iptables-legacy raw": {Rules: []string{":OUTPUT ACCEPT"}}},
			after:  map[string]Table{"iptables-legacy raw": {Absent: "iptables-legacy-save: exit status 1"}},
			want:   []string{"iptables-legacy raw: table gone (iptables-legacy-save: exit status 1)", "iptables-legacy raw: - :OUTPUT ACCEPT"},
		},
		{
			name:   "absent for another reason",
			before: map[string]Table{"ip6tables nat": {Absent: tableAbsent}},
			after:  map[string]Table{"ip6tables nat": {Absent: "ip6tables-save: exit status 1"}},
			want:   []string{"ip6tables nat: absent before (not in the kernel), absent now (ip6tables-save: exit status 1)"},
		},
		{
			name:   "recorded after only",
			before: map[string]Table{},
			after:  map[string]Table{"iptables broute": {Rules: []string{":BROUTING ACCEPT"}}},
			want:   []string{"iptables broute: table added (absent before: not recorded)", "iptables broute: + :BROUTING ACCEPT"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := diffTables(tc.before, tc.after); !slices.Equal(got, tc.want) {
				t.Errorf("diff:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// TestDiffTablesCounters: a dump that differs in counters alone, as
// traffic moves them, is the same table.
func TestDiffTablesCounters(t *testing.T) {
	t.Parallel()
	before := map[string]Table{"iptables-legacy raw": {Rules: parseSave(legacySave)["raw"]}}
	after := map[string]Table{"iptables-legacy raw": {Rules: parseSave(
		"*raw\n:PREROUTING ACCEPT [7000:90000000]\n:OUTPUT ACCEPT [5000:500000]\nCOMMIT\n")["raw"]}}
	if got := diffTables(before, after); len(got) != 0 {
		t.Errorf("counters alone differ: %q", got)
	}
}

func TestLineDiff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		a, b, want []string
	}{
		{name: "equal", a: []string{"x", "y"}, b: []string{"x", "y"}},
		{name: "both empty"},
		{name: "added in the middle", a: []string{"x", "z"}, b: []string{"x", "y", "z"}, want: []string{"+ y"}},
		{name: "removed at the end", a: []string{"x", "y"}, b: []string{"x"}, want: []string{"- y"}},
		{name: "moved", a: []string{"x", "y", "z"}, b: []string{"y", "z", "x"}, want: []string{"- x", "+ x"}},
		{name: "all new", b: []string{"x", "y"}, want: []string{"+ x", "+ y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := lineDiff(tc.a, tc.b); !slices.Equal(got, tc.want) {
				t.Errorf("lineDiff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestParseRoutes(t *testing.T) {
	t.Parallel()
	text := `default via 192.0.2.1 dev eth0
172.17.0.0/16 dev docker0 proto kernel scope link src 172.17.0.1 linkdown
10.244.0.0/24 dev kinject0 proto kernel scope link src 10.244.0.1
local 172.18.0.1 dev br-5e1d2c3b4a59 table local proto kernel scope host src 172.18.0.1
fe80::/64 dev veth1a2b3c proto kernel metric 256 pref medium
default via fe80::1 dev eth0 proto ra metric 1024 expires 1789sec pref medium
`
	got := parseRoutes(text, map[string]bool{"veth1a2b3c": true})
	want := []string{
		"default via 192.0.2.1 dev eth0",
		"10.244.0.0/24 dev kinject0 proto kernel scope link src 10.244.0.1",
		"default via fe80::1 dev eth0 proto ra metric 1024 pref medium",
	}
	if !slices.Equal(got, want) {
		t.Errorf("routes:\n%q\nwant:\n%q", got, want)
	}
}

// TestDiff: each part of a snapshot reaches the diff, and a host as
// found has none.
func TestDiff(t *testing.T) {
	t.Parallel()
	base := func() *Snapshot {
		return &Snapshot{
			Files:   map[string]FileState{"/etc/cni": {Mode: "drwxr-xr-x"}},
			Sysctls: map[string]string{"kernel.panic": "0"},
			Mounts:  []string{"/"}, Links: []string{"lo"}, Routes: []string{"default via 192.0.2.1 dev eth0"},
			Tables: map[string]Table{"ip6tables nat": {Absent: tableAbsent}},
		}
	}
	if got := base().Diff(base()); len(got) != 0 {
		t.Errorf("the same host: %q", got)
	}
	for _, tc := range []struct {
		name   string
		change func(s *Snapshot)
		want   string
	}{
		{"file", func(s *Snapshot) { s.Files["/etc/cni/net.d"] = FileState{Mode: "drwxr-xr-x"} }, "file added: /etc/cni/net.d (drwxr-xr-x)"},
		{"sysctl", func(s *Snapshot) { s.Sysctls["kernel.panic"] = "10" }, `sysctl kernel.panic: was "0", now "10"`},
		{"mount", func(s *Snapshot) { s.Mounts = append(s.Mounts, "/run/netns/cni-1") }, "new mount: /run/netns/cni-1"},
		{"cgroup", func(s *Snapshot) { s.Cgroups = []string{"/sys/fs/cgroup/cpu/kubepods"} }, "new cgroup: /sys/fs/cgroup/cpu/kubepods"},
		{"link", func(s *Snapshot) { s.Links = nil }, "link gone: lo"},
		{"route", func(s *Snapshot) { s.Routes = append(s.Routes, "10.244.0.0/24 dev kinject0") }, "new route: 10.244.0.0/24 dev kinject0"},
		{"process", func(s *Snapshot) { s.Processes = []string{"42 /pause"} }, "new container process: 42 /pause"},
		{"table", func(s *Snapshot) { s.Tables["ip6tables nat"] = Table{} }, "ip6tables nat: table added (absent before: not in the kernel)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			after := base()
			tc.change(after)
			if got := base().Diff(after); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("diff %q, want [%q]", got, tc.want)
			}
		})
	}
}
