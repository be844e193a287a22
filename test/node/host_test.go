package node

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// The host check's own tests: snapshots of temporary directories and
// of hand-made ones, so they need neither root nor a node
// (hostnet_test.go tests iptables and routes from canned output).

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
