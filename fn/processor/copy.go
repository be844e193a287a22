package processor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CopySelf copies the running executable into dir as inject-fn (with
// .exe on Windows), atomically: a temporary file in dir, made executable,
// renamed over any earlier copy. It returns the path written.
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
	name := "inject-fn"
	if filepath.Ext(self) == ".exe" {
		name += ".exe"
	}
	dest := filepath.Join(dir, name)
	if err := copyFile(self, dest); err != nil {
		return "", fmt.Errorf("copy %s to %s: %w", self, dest, err)
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
