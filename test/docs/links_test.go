// Package docs checks the repository's Markdown files as a whole: every
// relative link reaches a file or directory of the repository, and every
// #anchor a heading of the file it names. A section moved from one file to
// another cannot leave a link behind.
package docs

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/mddoc"
)

// markdownFiles returns the .md files of the repository (paths from its
// root, with slashes), leaving out hidden directories and build output.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "dist" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRelativeLinks: every relative link of every Markdown file resolves.
func TestRelativeLinks(t *testing.T) {
	root := mddoc.Root()
	files := markdownFiles(t, root)
	for _, want := range []string{"README.md", "docs/testing.md", "docs/gitops.md", "examples/argocd/README.md"} {
		found := false
		for _, f := range files {
			found = found || f == want
		}
		if !found {
			t.Fatalf("%s not among the Markdown files found: %v", want, files)
		}
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		a := mddoc.Anchors(mddoc.File(t, rel))
		anchors[rel] = a
		return a
	}
	checked := 0
	for _, file := range files {
		for _, l := range mddoc.Links(mddoc.File(t, file)) {
			u, err := url.Parse(l.Dest)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", file, l.Line, l.Dest, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // http(s), mailto: not checked here
			}
			checked++
			target := file
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					t.Errorf("%s:%d: link %q: absolute paths do not work on every host; use a relative one", file, l.Line, l.Dest)
					continue
				}
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), u.Path)))
				if target == ".." || strings.HasPrefix(target, "../") {
					t.Errorf("%s:%d: link %q leaves the repository", file, l.Line, l.Dest)
					continue
				}
				info, err := os.Stat(filepath.Join(root, filepath.FromSlash(target)))
				if err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", file, l.Line, l.Dest, target)
					continue
				}
				if info.IsDir() {
					if u.Fragment == "" {
						continue
					}
					target += "/README.md" // GitHub shows a directory's README
				}
			}
			if u.Fragment == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into %s, which is not Markdown", file, l.Line, l.Dest, target)
				continue
			}
			if !anchorsOf(target)[u.Fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", file, l.Line, l.Dest, target, u.Fragment)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links checked: is the link pattern still right?", checked)
	}
}
