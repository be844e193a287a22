package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputCatalogue feeds every kind of bad input the plugin meets in
// practice. Each gives a clear error naming the file, the document and the
// field; the other objects of the input are still reported; and nothing is
// written in place when any document failed.
func TestBadInputCatalogue(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	const good = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: busybox\n"
	cases := []struct {
		name, input string
		wantStderr  string // exact, with FILE for the input's path
	}{
		{"not YAML", "apiVersion: v1\nkind: [\n",
			"FILE: document 1 error: not valid YAML: yaml: line 2: did not find expected node content\n"},
		{"tab indent", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n",
			"FILE: document 1 error: not valid YAML: yaml: line 4: found character that cannot start any token\n"},
		{"scalar document", "hello\n",
			"FILE: document 1 error: document is a scalar, not an object (a mapping with apiVersion and kind)\n"},
		{"list document", "- a\n- b\n",
			"FILE: document 1 error: document is a list, not an object (a mapping with apiVersion and kind)\n"},
		{"missing kind", "apiVersion: v1\nmetadata: {name: x}\n",
			"FILE: document 1 error: kind: is required\n"},
		{"missing apiVersion", "kind: Deployment\nmetadata: {name: x}\n",
			"FILE: deployment/x error: apiVersion: is required (document 1)\n"},
		{"duplicate key", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dup\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        name: app2\n        image: x\n",
			"FILE: deployment.apps/dup error: spec.template.spec.containers[0].name: duplicate key (line 10) (document 1)\n"},
		{"containers not a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: notlist\nspec:\n  template:\n    spec:\n      containers: {name: app}\n",
			"FILE: deployment.apps/notlist error: spec.template.spec.containers: must be a list (document 1)\n"},
		{"container without a name", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: noname\nspec:\n  template:\n    spec:\n      containers:\n      - image: x\n",
			"FILE: deployment.apps/noname error: spec.template.spec.containers[0].name: is required (document 1)\n"},
		{"status not JSON", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\nspec:\n  template:\n    metadata:\n      annotations:\n        sidecar.kinject.dev/status: nope\n    spec:\n      containers:\n      - name: app\n        image: x\n",
			"FILE: deployment.apps/st error: spec.template.metadata.annotations: annotation sidecar.kinject.dev/status: not a valid status record: invalid character 'o' in literal null (expecting 'u') (document 1)\n"},
		{"status edited by hand", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\nspec:\n  template:\n    metadata:\n      annotations:\n        sidecar.kinject.dev/status: '{\"v\":1,\"template\":\"x\",\"containerz\":[]}'\n    spec:\n      containers:\n      - name: app\n        image: x\n",
			"FILE: deployment.apps/st error: spec.template.metadata.annotations: annotation sidecar.kinject.dev/status: not a valid status record: json: unknown field \"containerz\" (document 1)\n"},
		{"binary junk", "\x00\x01\xff\xfe junk\n",
			"FILE: document 1 error: not valid YAML: yaml: control characters are not allowed\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "in.yaml")
			input := good + "---\n" + c.input
			if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runCmd(t, "", "--local", "-f", path, "--in-place")
			want := "FILE: deployment.apps/good injected\n" + c.wantStderr + "error: 1 of 2 objects failed; no file was written\n"
			if got := strings.ReplaceAll(stderr, path, "FILE"); got != want || code != 1 {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", code, got, want)
			}
			if after, _ := os.ReadFile(path); string(after) != input {
				t.Errorf("the file was written although a document failed")
			}
		})
	}
}

// TestBadFiles covers inputs that are not files of YAML at all.
func TestBadFiles(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	emptyDir := filepath.Join(dir, "nothing-here")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		args       []string
		stdin      string
		wantStderr string
	}{
		{"0-byte file", []string{"-f", empty}, "", "error: no objects to inject in " + empty + "\n"},
		{"empty stdin", []string{"-f", "-"}, "", "error: no objects to inject in -\n"},
		{"only comments", []string{"-f", "-"}, "# nothing\n---\n", "error: no objects to inject in -\n"},
		{"a directory with no manifests", []string{"-f", emptyDir}, "", "error: no objects to inject in " + emptyDir + "\n"},
		{"missing file", []string{"-f", filepath.Join(dir, "gone.yaml")}, "", "error: stat " + filepath.Join(dir, "gone.yaml") + ": no such file or directory\n"},
		// Even root cannot read this file: the kernel answers EIO.
		{"unreadable file", []string{"-f", "/proc/self/mem"}, "", "error: read /proc/self/mem: input/output error\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCmd(t, c.stdin, append([]string{"--local"}, c.args...)...)
			if code != 1 || stderr != c.wantStderr || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1, no output and %q", code, stdout, stderr, c.wantStderr)
			}
		})
	}
}

// TestContinueOnError: asked to, --in-place writes what succeeded and
// leaves the failed documents exactly as they were.
func TestContinueOnError(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	const good = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: busybox\n"
	const bad = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  template:\n    spec:\n      containers: nope\n"
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(good+"---\n"+bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCmd(t, "", "--local", "-f", path, "--in-place", "--continue-on-error")
	if code != 1 || !strings.HasSuffix(stderr, "error: 1 of 2 objects failed and were left as they were; the others were written\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), "- name: envoy") || !strings.HasSuffix(string(after), "---\n"+bad) {
		t.Errorf("want the good document injected and the bad one untouched:\n%s", after)
	}
	_, stderr, code = runCmd(t, "", "--local", "-f", path, "--continue-on-error")
	if code == 0 || !strings.Contains(stderr, "--continue-on-error needs --in-place") {
		t.Errorf("without --in-place: exit %d, stderr %q", code, stderr)
	}
}
