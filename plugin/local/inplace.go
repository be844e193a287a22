package local

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// commitAll renames every finished temporary file over its original, in
// order, and returns how many of them it renamed.
func commitAll(rewrites []*inPlaceFile) (int, error) {
	for i, r := range rewrites {
		if err := r.commit(); err != nil {
			return i, fmt.Errorf("write %s: %w", r.what(), err)
		}
	}
	return len(rewrites), nil
}

// inPlaceFile is the new content of one file of --in-place. While every
// document comes out unchanged it only counts bytes (the output so far is
// the original's first n bytes); at the first change it creates a temporary
// file in the same directory, copies that prefix from the original and
// writes through. commit renames it over the original; a file that did not
// change is never touched. path is the file itself, a symbolic link
// resolved: the link stays, and the file it points to is replaced.
type inPlaceFile struct {
	path string
	name string // as the input named it (a link, maybe)
	mode fs.FileMode
	// uid and gid are the original's owner and group (owned: known).
	uid, gid int
	owned    bool
	n        int64
	tmp      *os.File
	done     bool  // tmp is complete and closed
	err      error // the first write error
}

func (f *inPlaceFile) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.tmp == nil {
		f.n += int64(len(p))
		return len(p), nil
	}
	n, err := f.tmp.Write(p)
	if err != nil {
		f.err = err
	}
	return n, err
}

// change starts the temporary file, once.
func (f *inPlaceFile) change() {
	if f.tmp != nil || f.err != nil {
		return
	}
	if err := checkWritable(f.path, f.mode); err != nil {
		f.err = err
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), "."+filepath.Base(f.path)+".tmp-*")
	if err != nil {
		f.err = err
		return
	}
	f.tmp = tmp
	orig, err := os.Open(f.path)
	if err == nil {
		_, err = io.CopyN(tmp, orig, f.n)
		_ = orig.Close()
	}
	if err != nil {
		f.err = err
	}
}

// what names the file in an error: as the input named it, and the file a
// link of that name points to.
func (f *inPlaceFile) what() string {
	if info, err := os.Lstat(f.name); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		return f.name
	}
	return fmt.Sprintf("%s (a link to %s)", f.name, f.path)
}

// finish makes the temporary file durable, with the original's mode,
// owner and group.
func (f *inPlaceFile) finish() error {
	if f.tmp == nil {
		return nil
	}
	err := f.tmp.Sync()
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && f.owned {
		// Before the mode: chown clears the setuid and setgid bits.
		err = keepOwner(f.tmp.Name(), f.uid, f.gid)
	}
	if err == nil {
		err = os.Chmod(f.tmp.Name(), f.mode)
	}
	f.done = err == nil
	return err
}

// commit renames the temporary file over the original.
func (f *inPlaceFile) commit() error {
	if f.tmp == nil {
		return nil
	}
	if err := os.Rename(f.tmp.Name(), f.path); err != nil {
		return err
	}
	f.tmp = nil
	return nil
}

// discard removes the temporary file, if it is still there.
func (f *inPlaceFile) discard() {
	if f.tmp == nil {
		return
	}
	if !f.done {
		_ = f.tmp.Close()
	}
	_ = os.Remove(f.tmp.Name())
	f.tmp = nil
}
