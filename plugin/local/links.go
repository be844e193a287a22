package local

import (
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// inPlaceTargets resolves where --in-place writes each file: the file a
// symbolic link points to (the link itself is kept), and drops every file
// reached a second time (through a link and directly, or through two
// links), so that each file is edited once. A link found in a directory
// that points outside the paths given with -f is an error unless
// --follow-external-links allows it; a file named with -f is followed
// wherever it points, since the user named it.
func inPlaceTargets(f *config.Flags, files []*localFile) ([]*localFile, error) {
	roots := make([]string, 0, len(f.Filenames))
	for _, name := range f.Filenames {
		if real, err := realPath(name); err == nil {
			roots = append(roots, real)
		}
	}
	seen := map[string]bool{}
	out := files[:0]
	for _, file := range files {
		target, err := realPath(file.name)
		if err != nil {
			return nil, fmt.Errorf("--in-place: resolve %s: %w", file.name, err)
		}
		if file.walked && !f.FollowExternalLinks && !within(target, roots) {
			return nil, fmt.Errorf("--in-place: %s is a symbolic link to %s, outside the paths given with -f; nothing was written (add that path to -f, or pass --follow-external-links to edit it)", file.name, target)
		}
		if seen[target] {
			continue
		}
		seen[target] = true
		file.target = target
		out = append(out, file)
	}
	return out, nil
}

// realPath is path made absolute with every symbolic link resolved.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path is one of roots or lies in one of them.
func within(path string, roots []string) bool {
	for _, root := range roots {
		if path == root || strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// keptMode is the part of a file's mode that --in-place gives the new
// file: the permissions and the setuid, setgid and sticky bits.
func keptMode(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// checkWritable refuses to replace a file the user may not write: a
// rename in a writable directory would replace it anyway, which an
// editor does not do. root may write any file, so for root a file with
// no write permission for its owner counts as read-only.
func checkWritable(path string, mode fs.FileMode) error {
	if os.Geteuid() == 0 {
		if mode&0o200 == 0 {
			return fmt.Errorf("the file is read-only (mode %04o); --in-place leaves it as it is (make it writable to edit it)", mode.Perm())
		}
		return nil
	}
	if !mayWrite(path, mode) {
		return fmt.Errorf("you may not write the file (mode %04o); --in-place leaves it as it is", mode.Perm())
	}
	return nil
}
