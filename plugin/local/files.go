package local

import (
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// localFile is one input of --local. Files and stdin are read as a stream
// when they are processed; only URLs are fetched whole beforehand.
type localFile struct {
	name string      // as given ("-" for stdin), or found in a directory
	mode fs.FileMode // files only: what --in-place keeps (see keptMode)
	// uid and gid are the file's owner and group (owned: known), which
	// --in-place keeps where it may.
	uid, gid int
	owned    bool
	// target is the file --in-place writes: name with every symbolic
	// link resolved (set by inPlaceTargets).
	target string
	data   []byte // URLs only
	// walked: found in a directory rather than named. A document that is
	// not a Kubernetes object there (a CI workflow, a values file) is
	// skipped, not an error.
	walked bool
}

// localFiles lists every -f argument: files, directories (YAML and JSON
// files in them, recursively with -R), URLs (fetched whole) and stdin.
// Files are only looked at here; they are read when they are processed.
func (fe FrontEnd) localFiles(f *config.Flags) ([]*localFile, error) {
	var files []*localFile
	for _, name := range f.Filenames {
		switch {
		case name == "-":
			files = append(files, &localFile{name: name})
		case config.IsURL(name):
			if fe.FetchURL == nil {
				return nil, fmt.Errorf("read %s: this binary reads no URLs (kinject-live does)", name)
			}
			data, err := fe.FetchURL(name)
			if err != nil {
				return nil, err
			}
			if data == nil {
				data = []byte{}
			}
			files = append(files, &localFile{name: name, data: data})
		default:
			found, err := expandPath(f, name)
			if err != nil {
				return nil, err
			}
			files = append(files, found...)
		}
	}
	return files, nil
}
func expandPath(f *config.Flags, root string) ([]*localFile, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err // names the path already
	}
	if !info.IsDir() {
		f, err := statFile(root)
		if err != nil {
			return nil, err
		}
		return []*localFile{f}, nil
	}
	var files []*localFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Hidden directories and files (.git, .github, .helm caches) are
		// skipped unless named.
		hidden := path != root && strings.HasPrefix(d.Name(), ".")
		if d.IsDir() {
			if path != root && (!f.Recursive || hidden) {
				return filepath.SkipDir
			}
			return nil
		}
		if hidden {
			return nil
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			f, err := statFile(path)
			if err != nil {
				return err
			}
			f.walked = true
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	return files, nil
}

// statFile names a file of the input; it is opened when it is processed.
func statFile(path string) (*localFile, error) {
	// os errors name the operation and the path already.
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	uid, gid, owned := fileOwner(info)
	return &localFile{name: path, mode: keptMode(info.Mode()), uid: uid, gid: gid, owned: owned}, nil
}
