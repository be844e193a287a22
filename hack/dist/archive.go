package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// entry is one archive member.
type entry struct {
	name string
	mode int64
	data []byte
}

// writeArchive writes the plugin archive of the binaries in binDir
// and the license: a zip on windows, else a tar.gz. Entries are sorted,
// with fixed times, owners and modes.
func writeArchive(path string, p platform, binDir string, license []byte) error {
	entries := []entry{{"LICENSE", 0o644, license}}
	for _, name := range pluginBinaries(p) {
		b, err := os.ReadFile(filepath.Join(binDir, name))
		if err != nil {
			return err
		}
		entries = append(entries, entry{name, 0o755, b})
	}
	if p.OS != "windows" {
		return writeTarGzFile(path, entries)
	}
	sortEntries(entries)
	var buf bytes.Buffer
	if err := writeZip(&buf, entries); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes(), 0o644)
}

// writeTarGzFile writes entries, sorted, as the tar.gz file at path.
func writeTarGzFile(path string, entries []entry) error {
	sortEntries(entries)
	var buf bytes.Buffer
	if err := writeTarGz(&buf, entries); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes(), 0o644)
}

func sortEntries(entries []entry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
}

func writeTarGz(w io.Writer, entries []entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	// gzip.Header is left zero: no name, no mtime.
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.name,
			Mode:     e.mode,
			Size:     int64(len(e.data)),
			ModTime:  archiveTime,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, entries []entry) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: archiveTime}
		hdr.SetMode(os.FileMode(e.mode))
		f, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeChecksums writes "<sha256>  <name>" lines, sorted by name.
func writeChecksums(out string, names []string) error {
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(out, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	if err := writeFileAtomic(filepath.Join(out, checksums), []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dist: wrote %d artifacts and %s to %s\n", len(names), checksums, out)
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readChecksums reads a checksums.txt into name -> sha256.
func readChecksums(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (build first, without -skip-build)", err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		sums[strings.TrimPrefix(name, "*")] = sum
	}
	return sums, sc.Err()
}
