package local

import (
	"io/fs"
	"testing"
)

func TestWithin(t *testing.T) {
	t.Parallel()
	roots := []string{"/repo/k8s", "/repo/app.yaml", "/"}
	cases := []struct {
		name  string
		path  string
		roots []string
		want  bool
	}{
		{"a root itself", "/repo/k8s", roots[:2], true},
		{"a file in a root", "/repo/k8s/base/app.yaml", roots[:2], true},
		{"a named file", "/repo/app.yaml", roots[:2], true},
		{"a sibling with a common prefix", "/repo/k8s-other/app.yaml", roots[:2], false},
		{"outside", "/etc/passwd", roots[:2], false},
		{"under the file system's root", "/etc/passwd", roots[2:], true},
		{"no roots", "/repo/k8s", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := within(c.path, c.roots); got != c.want {
				t.Errorf("within(%q, %q) = %v, want %v", c.path, c.roots, got, c.want)
			}
		})
	}
}

func TestKeptMode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mode fs.FileMode
		want fs.FileMode
	}{
		{"permissions", 0o640, 0o640},
		{"read-only", 0o444, 0o444},
		{"setgid and sticky", fs.ModeSetgid | fs.ModeSticky | 0o755, fs.ModeSetgid | fs.ModeSticky | 0o755},
		{"the type is not a permission", fs.ModeSymlink | 0o777, 0o777},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := keptMode(c.mode); got != c.want {
				t.Errorf("keptMode(%v) = %v, want %v", c.mode, got, c.want)
			}
		})
	}
}
