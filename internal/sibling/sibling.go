// Package sibling finds the programs a release installs side by side:
// kubectl-inject hands command lines to kinject-live beside it, and
// kubectl-inject and inject-fn run kinject-cel beside them.
package sibling

import (
	"os"
	"path/filepath"
	"runtime"
)

// Path returns where the program name (".exe" added on Windows) lies
// beside the running executable, its symbolic links followed (krew links
// only kubectl-inject into its bin directory). It does not check that the
// program is there.
func Path(name string) (string, error) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", err
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(filepath.Dir(self), name), nil
}
