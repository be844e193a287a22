//go:build unix

package local

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// fileOwner returns the owner and group of the file info describes.
func fileOwner(info fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// keepOwner gives the file at path the owner and group uid and gid, where
// the process may: changing the owner takes privileges (EPERM is not an
// error), and a user may give a file only a group of their own.
func keepOwner(path string, uid, gid int) error {
	err := os.Chown(path, uid, gid)
	if errors.Is(err, syscall.EPERM) {
		// Keep at least the group, when it is one of the user's.
		if err = os.Chown(path, -1, gid); errors.Is(err, syscall.EPERM) {
			err = nil
		}
	}
	return err
}

// mayWrite reports whether the user may write the file at path
// (access(2) with W_OK).
func mayWrite(path string, _ fs.FileMode) bool {
	return syscall.Access(path, 0x2) == nil
}
