package staticdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apiserver/pkg/admission/plugin/manifest"

	"github.com/kinject/kubectl-inject/pkg/admission"
	"github.com/kinject/kubectl-inject/pkg/textdiff"
)

// Write validates files and writes them into dir (creating dir/mutating
// and dir/validating as needed). A file whose content is already the
// same is left untouched, so that the API server's hash, and its reload,
// change only when something does. It returns the paths written.
func Write(dir string, files []admission.StaticFile) ([]string, error) {
	if err := Validate(files); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range files {
		target := filepath.Join(dir, filepath.FromSlash(f.Path))
		if old, err := os.ReadFile(target); err == nil && bytes.Equal(old, f.Data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return written, fmt.Errorf("writing %s: %w", target, err)
		}
		if err := writeAtomic(target, f.Data); err != nil {
			return written, err
		}
		written = append(written, target)
	}
	return written, nil
}

// writeAtomic writes data to a temporary file beside target and renames
// it over target. The temporary name ends in .tmp, an extension the API
// server's loader skips.
func writeAtomic(target string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", target, err)
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(0o644)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), target)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", target, werr)
	}
	return nil
}

// Check compares dir with files: it writes a unified diff of every file
// that is missing or differs to w and returns how many do.
func Check(w io.Writer, dir string, files []admission.StaticFile, opts textdiff.Options) (int, error) {
	stale := 0
	for _, f := range files {
		target := filepath.Join(dir, filepath.FromSlash(f.Path))
		old, err := os.ReadFile(target)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return stale, fmt.Errorf("reading %s: %w", target, err)
		}
		if bytes.Equal(old, f.Data) {
			continue
		}
		from := target
		if err != nil {
			from = "/dev/null"
		}
		if _, err := textdiff.Write(w, from, target, string(old), string(f.Data), opts); err != nil {
			return stale, err
		}
		stale++
	}
	return stale, nil
}

// Hash is the hash the API server gives the manifests of one plugin's
// directory, computed by the API server's own loader (k8s.io/apiserver's
// manifest.LoadFiles): "" for a directory with none.
func Hash(dir string) (string, error) {
	_, hash, err := manifest.LoadFiles(dir)
	return hash, err
}
