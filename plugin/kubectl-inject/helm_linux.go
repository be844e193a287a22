package main

import (
	"fmt"
	"os"
	"syscall"
)

// helmStderr opens the stderr of the parent process (Helm) through /proc,
// for appending, or returns nil when it cannot be reached or needs no
// copy: a regular file (Helm's own writes, at its offset, would overwrite
// ours), or the very file this process writes its stderr to already.
func helmStderr() *os.File {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", os.Getppid()), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil
	}
	helm, err1 := f.Stat()
	own, err2 := os.Stderr.Stat()
	if err1 != nil || helm.Mode().IsRegular() || (err2 == nil && sameFile(helm, own)) {
		f.Close()
		return nil
	}
	return f
}

func sameFile(a, b os.FileInfo) bool {
	x, ok1 := a.Sys().(*syscall.Stat_t)
	y, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && x.Dev == y.Dev && x.Ino == y.Ino
}
