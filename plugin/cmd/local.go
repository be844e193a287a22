package cmd

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/live"
	"github.com/kinject/kubectl-inject/pkg/manifest"
)

// localFile is one input of --local and its result.
type localFile struct {
	name    string // as given ("-" for stdin), or found in a directory
	mode    fs.FileMode
	in, out []byte
	entries []inject.Entry
}

// runLocal injects the files given with -f as text and prints them (or
// rewrites them with --in-place when no document failed).
func (o *Options) runLocal() error {
	files, err := o.readLocalFiles()
	if err != nil {
		return err
	}
	var failed, changed, total int
	for _, f := range files {
		var out bytes.Buffer
		err := manifest.Process(bytes.NewReader(f.in), &out, func(index int, doc []byte) []byte {
			text, entries := o.injector.ProcessText(o.op, doc, index)
			f.entries = append(f.entries, entries...)
			return text
		})
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		f.out = out.Bytes()
		for _, e := range f.entries {
			total++
			if e.Action == inject.Failed {
				failed++
			} else if e.Changed() {
				changed++
			}
			fmt.Fprintln(o.ErrOut, localLine(f.name, len(files) > 1 || f.name != "-", e, o.Check))
		}
	}
	if total == 0 {
		// As kubectl apply does: an input with no object is a mistake.
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.name
		}
		if len(names) == 0 {
			names = o.FilenameOptions.Filenames
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("no objects to inject in %s", strings.Join(names, ", "))}
	}
	switch {
	case failed > 0 && o.InPlace:
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed; no file was written", failed, total)}
	case failed > 0 && !o.Check:
		o.writeLocalOutput(files)
		return &ExitError{Code: 1, Err: fmt.Errorf("%d of %d objects failed (written unchanged)", failed, total)}
	case o.Check:
		if failed+changed > 0 {
			return &ExitError{Code: 1, Err: fmt.Errorf("check: %d of %d objects are not current (%d would change, %d failed)", failed+changed, total, changed, failed)}
		}
		return nil
	case o.InPlace && o.dryRun == live.DryRunClient:
		return nil // report only: a dry run writes no file
	case o.InPlace:
		return writeInPlace(files)
	}
	o.writeLocalOutput(files)
	return nil
}

// writeLocalOutput prints every file's result, one stream.
func (o *Options) writeLocalOutput(files []*localFile) {
	for i, f := range files {
		if i > 0 {
			if prev := files[i-1].out; len(prev) > 0 && prev[len(prev)-1] != '\n' {
				fmt.Fprintln(o.Out)
			}
			fmt.Fprintln(o.Out, "---")
		}
		_, _ = o.Out.Write(f.out)
	}
}

// localLine renders a report line: "app.yaml: deployment.apps/web injected".
func localLine(file string, withFile bool, e inject.Entry, check bool) string {
	var b strings.Builder
	if withFile {
		b.WriteString(file)
		b.WriteString(": ")
	}
	if e.Kind != "" && e.Name != "" {
		b.WriteString(objectRef(e.APIVersion, e.Kind, e.Name))
	} else {
		b.WriteString(e.Location())
	}
	b.WriteByte(' ')
	if check && e.Changed() {
		b.WriteString("would be ")
	}
	b.WriteString(string(e.Action))
	switch {
	case e.Action == inject.Failed:
		fmt.Fprintf(&b, ": %s", e.Message)
		if e.Kind != "" {
			fmt.Fprintf(&b, " (%s)", e.Location())
		}
	case e.Action == inject.Skipped && e.Reason != "":
		fmt.Fprintf(&b, ": %s", e.Reason)
	}
	if e.Reformatted {
		b.WriteString(" (reformatted)")
	}
	return b.String()
}

// objectRef names an object as kubectl does from its apiVersion and kind.
func objectRef(apiVersion, kind, name string) string {
	ref := strings.ToLower(kind)
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		ref += "." + g
	}
	return ref + "/" + name
}

// readLocalFiles reads every -f argument: files, directories (YAML and JSON
// files in them, recursively with -R), URLs and stdin.
func (o *Options) readLocalFiles() ([]*localFile, error) {
	var files []*localFile
	for _, name := range o.FilenameOptions.Filenames {
		switch {
		case name == "-":
			data, err := io.ReadAll(o.In)
			if err != nil {
				return nil, fmt.Errorf("read stdin: %w", err)
			}
			files = append(files, &localFile{name: name, in: data})
		case isURL(name):
			data, err := fetch(name)
			if err != nil {
				return nil, err
			}
			files = append(files, &localFile{name: name, in: data})
		default:
			found, err := o.expandPath(name)
			if err != nil {
				return nil, err
			}
			files = append(files, found...)
		}
	}
	return files, nil
}

func (o *Options) expandPath(root string) ([]*localFile, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, err // names the path already
	}
	if !info.IsDir() {
		f, err := readFile(root)
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
		if d.IsDir() {
			if path != root && !o.FilenameOptions.Recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			f, err := readFile(path)
			if err != nil {
				return err
			}
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	return files, nil
}

func readFile(path string) (*localFile, error) {
	// os errors name the operation and the path already.
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &localFile{name: path, mode: info.Mode().Perm(), in: data}, nil
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func fetch(url string) ([]byte, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	return data, nil
}

// writeInPlace replaces each changed file with its result, atomically:
// the new content goes to a temporary file in the same directory, which is
// then renamed over the original.
func writeInPlace(files []*localFile) error {
	for _, f := range files {
		if bytes.Equal(f.in, f.out) {
			continue
		}
		if err := atomicWrite(f.name, f.out, f.mode); err != nil {
			return err
		}
	}
	return nil
}

func atomicWrite(path string, data []byte, mode fs.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
