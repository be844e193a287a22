package node

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Bounds of the walk of the host paths: a machine where they hold a
// real kubelet's or containerd's state must not make every snapshot
// read gigabytes. A walk that reaches maxWalkEntries is reported as a
// difference (the host could not be compared in full), never passed.
const (
	maxWalkEntries = 20000
	// maxHashBytes is how much of a file is hashed; its size is compared
	// whole, so only a change past it that keeps the size goes unseen.
	maxHashBytes = 16 << 20
)

// FileState is what a snapshot keeps of one path: its type and
// permission bits; for a regular file its size and content hash, for a
// symlink its target. A directory's size and every mtime are left out:
// they change when an entry comes and goes again, which the entries
// themselves already say.
type FileState struct {
	Mode   string `json:"mode"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Target string `json:"target,omitempty"`
	// Err says why the content could not be read (a namespace file
	// under /run/netns reads as an error).
	Err string `json:"err,omitempty"`
}

// String is the state in the words of ls: mode, then size and hash or
// target.
func (f FileState) String() string {
	s := f.Mode
	switch {
	case f.Err != "":
		s += fmt.Sprintf(" %d bytes, unreadable: %s", f.Size, f.Err)
	case f.SHA256 != "":
		s += fmt.Sprintf(" %d bytes sha256:%.12s", f.Size, f.SHA256)
	case f.Target != "":
		s += " -> " + f.Target
	}
	return s
}

// walkRoots are the roots of paths not under another of paths, sorted:
// a nested path is walked with its root.
func walkRoots(paths []string) []string {
	sorted := slices.Clone(paths)
	sort.Strings(sorted)
	var roots []string
	for _, p := range sorted {
		if !slices.ContainsFunc(roots, func(r string) bool { return under(p, r) }) {
			roots = append(roots, p)
		}
	}
	return roots
}

// under says whether p is root or beneath it.
func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// snapshotFiles records every path under roots (the roots included, when
// they exist), at most limit per root. It returns the roots whose walk
// stopped at the limit.
func snapshotFiles(roots []string, limit int) (files map[string]FileState, truncated []string) {
	files = map[string]FileState{}
	for _, root := range walkRoots(roots) {
		seen := 0
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p != root || !os.IsNotExist(err) {
					files[p] = FileState{Mode: "?", Err: err.Error()}
				}
				return nil
			}
			if seen++; seen > limit {
				truncated = append(truncated, root)
				return filepath.SkipAll
			}
			files[p] = fileState(p, d)
			return nil
		})
	}
	return files, truncated
}

// fileState reads one path's state. Only regular files are opened: a
// FIFO would block, a socket cannot be read.
func fileState(p string, d fs.DirEntry) FileState {
	info, err := d.Info()
	if err != nil {
		return FileState{Mode: "?", Err: err.Error()}
	}
	st := FileState{Mode: info.Mode().String()}
	switch {
	case info.Mode().IsRegular():
		st.Size = info.Size()
		st.SHA256, err = hashFile(p)
		if err != nil {
			st.Err = err.Error()
		}
	case info.Mode()&fs.ModeSymlink != 0:
		if st.Target, err = os.Readlink(p); err != nil {
			st.Err = err.Error()
		}
	}
	return st
}

// hashFile hashes the first maxHashBytes of a file.
func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxHashBytes)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileChurn says whether a path that differs between before and after
// is another program's, not the node's: each row is one exclusion and
// its reason. Nothing else under the host paths is skipped: the node's
// own state lives in its directory (Node.Dir), which Stop removes and
// the tests check apart, so whatever appears under a host path is a
// leftover.
func fileChurn(p string, before, after *Snapshot) bool {
	switch {
	// Docker's containerd puts its shims' sockets in shimDir whenever
	// a container starts, and removes them when it stops; the node's
	// shims are killed and their sockets removed at stop (killShims),
	// so a socket a process listens on is Docker's.
	case filepath.Dir(p) == shimDir:
		base := filepath.Base(p)
		return slices.Contains(after.LiveShims, base) || slices.Contains(before.LiveShims, base)
	// The same shims create the socket directory and its parent when
	// they do not exist.
	case p == shimDir || p == filepath.Dir(shimDir):
		return len(after.LiveShims) > 0
	}
	return false
}

// diffFiles lists the paths added, removed and changed from before to
// after. A directory added or removed is one line, with what it holds
// counted, not listed path by path.
func diffFiles(before, after *Snapshot) []string {
	var out []string
	var addedDirs, removedDirs []string
	report := func(dirs *[]string, verb, p string, f FileState, other map[string]FileState) {
		for _, d := range *dirs {
			if under(p, d) {
				return // counted in its directory's line
			}
		}
		line := fmt.Sprintf("%s: %s (%s)", verb, p, f)
		if strings.HasPrefix(f.Mode, "d") {
			*dirs = append(*dirs, p)
			if n := beneath(p, other); n > 0 {
				line += fmt.Sprintf(" holding %d entries", n)
			}
		}
		out = append(out, line)
	}
	for _, p := range sortedKeys(after.Files) {
		b, had := before.Files[p]
		a := after.Files[p]
		switch {
		case fileChurn(p, before, after):
		case !had:
			report(&addedDirs, "file added", p, a, after.Files)
		case b != a:
			out = append(out, fmt.Sprintf("file changed: %s: %s, now %s", p, b, a))
		}
	}
	for _, p := range sortedKeys(before.Files) {
		if _, has := after.Files[p]; !has && !fileChurn(p, before, after) {
			report(&removedDirs, "file removed", p, before.Files[p], before.Files)
		}
	}
	truncated := append(slices.Clone(before.Truncated), after.Truncated...)
	sort.Strings(truncated)
	for _, root := range slices.Compact(truncated) {
		out = append(out, fmt.Sprintf("files under %s: too many to walk, not compared in full", root))
	}
	return out
}

// beneath counts the paths of files strictly under dir.
func beneath(dir string, files map[string]FileState) int {
	n := 0
	for p := range files {
		if p != dir && under(p, dir) {
			n++
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
