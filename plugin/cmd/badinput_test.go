package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputCatalogue feeds every kind of bad input the plugin meets in
// practice, as the second document of a file. Each gives a clear error
// naming the file's line (and column, for YAML), the document counted from
// 1 and the field; the other objects of the input are still reported, as
// not written; and nothing is written in place when any document failed.
func TestBadInputCatalogue(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	const good = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: busybox\n"
	cases := []struct {
		name, input string
		wantStderr  string // exact, with FILE for the input's path
	}{
		{"not YAML", "apiVersion: v1\nkind: [\n",
			"FILE:14:1: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n"},
		{"flow mapping not closed", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {a: [}\nspec: {}\n",
			"FILE:16:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n"},
		{"tab indent", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n",
			"FILE:15:1: document 2 error: invalid_yaml: not valid YAML: found character that cannot start any token\n"},
		{"scalar document", "hello\n",
			"FILE:12: document 2 error: invalid_object: document is a scalar, not an object (a mapping with apiVersion and kind)\n"},
		{"list document", "- a\n- b\n",
			"FILE:12: document 2 error: invalid_object: document is a list, not an object (a mapping with apiVersion and kind)\n"},
		{"missing kind", "apiVersion: v1\nmetadata: {name: x}\n",
			"FILE:12: document 2 error: invalid_object: kind: is required\n"},
		{"missing apiVersion", "kind: Deployment\nmetadata: {name: x}\n",
			"FILE:12: deployment/x error: invalid_object: apiVersion: is required (document 2)\n"},
		{"duplicate key", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dup\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        name: app2\n        image: x\n",
			"FILE:21: deployment.apps/dup error: invalid_object: spec.template.spec.containers[0].name: duplicate key (document 2)\n"},
		{"containers not a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: notlist\nspec:\n  template:\n    spec:\n      containers: {name: app}\n",
			"FILE:19:19: deployment.apps/notlist error: invalid_object: spec.template.spec.containers: must be a list (document 2)\n"},
		{"container without a name", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: noname\nspec:\n  template:\n    spec:\n      containers:\n      - image: x\n",
			"FILE:20:9: deployment.apps/noname error: invalid_object: spec.template.spec.containers[0].name: is required (document 2)\n"},
		{"status not JSON", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\nspec:\n  template:\n    metadata:\n      annotations:\n        sidecar.kinject.dev/status: nope\n    spec:\n      containers:\n      - name: app\n        image: x\n",
			"FILE:12: deployment.apps/st error: invalid_status: spec.template.metadata.annotations: annotation sidecar.kinject.dev/status: not a valid status record: invalid character 'o' in literal null (expecting 'u') (document 2)\n"},
		{"status edited by hand", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: st\nspec:\n  template:\n    metadata:\n      annotations:\n        sidecar.kinject.dev/status: '{\"v\":1,\"template\":\"x\",\"containerz\":[]}'\n    spec:\n      containers:\n      - name: app\n        image: x\n",
			"FILE:12: deployment.apps/st error: invalid_status: spec.template.metadata.annotations: annotation sidecar.kinject.dev/status: not a valid status record: json: unknown field \"containerz\" (document 2)\n"},
		{"binary junk", "\x00\x01\xff\xfe junk\n",
			"FILE:12: document 2 error: invalid_yaml: not valid YAML: control characters are not allowed (value: 0)\n"},
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
			want := "FILE: deployment.apps/good would be injected (not written)\n" + c.wantStderr +
				"error: 1 of 2 objects failed, so no file was changed (fix them, or add --continue-on-error to write the others)\n"
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
	if code != 1 || !strings.HasSuffix(stderr, "error: 1 of 2 objects failed and were left as they were in their files; the other objects were written\n") {
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

// TestReportSaysWhatWasWritten: each line says what became of its object:
// injected (printed or written), would be injected (not written) when
// another document failed, injected (dry run) when nothing is written on
// purpose; and the last line says where the failed objects went.
func TestReportSaysWhatWasWritten(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	const good = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: busybox\n"
	const bad = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  labels: {a: [}\n"
	cases := []struct {
		name, input string
		args        []string
		want        string // stderr, with FILE for the input's path
		written     bool
	}{
		{"printed", good + "---\n" + bad, nil,
			"FILE: deployment.apps/good injected\n" +
				"FILE:16:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n" +
				"error: 1 of 2 objects failed; the output holds them as they were in the input\n", false},
		{"in place", good, []string{"--in-place"}, "FILE: deployment.apps/good injected\n", true},
		{"in place with a failure", good + "---\n" + bad, []string{"--in-place"},
			"FILE: deployment.apps/good would be injected (not written)\n" +
				"FILE:16:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n" +
				"error: 1 of 2 objects failed, so no file was changed (fix them, or add --continue-on-error to write the others)\n", false},
		{"in place dry run", good, []string{"--in-place", "--dry-run=client"}, "FILE: deployment.apps/good injected (dry run)\n", false},
		{"check", good, []string{"--check"},
			"FILE: deployment.apps/good would be injected\nerror: check: 1 of 1 objects are not current (1 would change, 0 failed)\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.yaml")
			if err := os.WriteFile(path, []byte(c.input), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, _ := runCmd(t, "", append([]string{"--local", "-f", path}, c.args...)...)
			if got := strings.ReplaceAll(stderr, path, "FILE"); got != c.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, c.want)
			}
			after, _ := os.ReadFile(path)
			if written := string(after) != c.input; written != c.written {
				t.Errorf("file written: %v, want %v", written, c.written)
			}
		})
	}
}
