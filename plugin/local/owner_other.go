//go:build !unix

package local

import "io/fs"

// fileOwner: files have no numeric owner here.
func fileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// keepOwner: nothing to keep.
func keepOwner(string, int, int) error { return nil }

// mayWrite reports whether the file is not read-only.
func mayWrite(_ string, mode fs.FileMode) bool { return mode&0o200 != 0 }
