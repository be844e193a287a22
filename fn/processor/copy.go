package processor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
)

// CopySelf copies the running executable into dir as inject-fn (with
// .exe on Windows), and kinject-cel, the CEL evaluator it runs beside
// itself (podexpr.HelperPath), as kinject-cel; each atomically: a
// temporary file in dir, made executable, renamed over any earlier copy.
// It returns the path of inject-fn's copy. Without kinject-cel it copies
// nothing: a copy that could not evaluate a template's expressions would
// fail later, far from here.
//
// It is how a container without a shell hands the binary over: the
// inject-fn image is FROM scratch, so an init container runs
// `/inject-fn --copy-to /custom-tools` to put the function on a volume
// that Argo CD's repo-server (or any other tool) mounts on its PATH.
func CopySelf(dir string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this executable: %w", err)
	}
	helper, err := podexpr.HelperPath()
	if err != nil {
		return "", err
	}
	exe := ""
	if filepath.Ext(self) == ".exe" {
		exe = ".exe"
	}
	dest := filepath.Join(dir, "inject-fn"+exe)
	for _, c := range []struct{ from, to string }{{helper, filepath.Join(dir, podexpr.HelperName+exe)}, {self, dest}} {
		if err := copyFile(c.from, c.to); err != nil {
			return "", fmt.Errorf("copy %s to %s: %w", c.from, c.to, err)
		}
	}
	return dest, nil
}

// copyFile writes src's content to dest through a temporary file in dest's
// directory, with mode 0755.
func copyFile(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing left to remove
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}
