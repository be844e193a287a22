package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fieldInput is a ResourceList of two Pods: one with a container of the
// sidecar's name (line 12, column 7), one whose containers are not a list
// (line 18, column 17).
const fieldInput = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: clash
  spec:
    containers:
    - name: app
      image: a
    - name: envoy
      image: b
- apiVersion: v1
  kind: Pod
  metadata: {name: notlist}
  spec:
    containers: 3
`

// TestFieldErrorPositions: the built inject-fn points an error about a
// field at that field: in its results (field.path, and the line and
// column of the ResourceList, as its YAML errors say) and, in file mode, at the file's
// line and column.
func TestFieldErrorPositions(t *testing.T) {
	t.Run("function results", func(t *testing.T) {
		cmd := exec.Command(injectFn(t))
		cmd.Stdin = strings.NewReader(fieldInput)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err == nil {
			t.Fatalf("exit 0, want 1")
		}
		for _, want := range []string{
			`container "envoy" already exists and was not injected by kubectl-inject (rename it, or remove it so the template''s can be added) (line 12, column 7 of the ResourceList)'`,
			`message: 'invalid_object: spec.containers: must be a list (line 18, column 17 of the ResourceList)'`,
			"  field:\n    path: spec.containers\n", // the KRM way to name the field
		} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("results lack %q:\n%s", want, stdout.String())
			}
		}
	})
	t.Run("file mode", func(t *testing.T) {
		dir := t.TempDir()
		config := filepath.Join(dir, "config.yaml")
		input := filepath.Join(dir, "app.yaml")
		if err := os.WriteFile(config, []byte("apiVersion: kinject.dev/v1alpha1\nkind: SidecarInjection\nmetadata: {name: envoy}\nspec: {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		const file = `apiVersion: v1
kind: Pod
metadata:
  name: clash
spec:
  containers:
  - name: app
    image: a
  - name: envoy
    image: b
---
apiVersion: v1
kind: Pod
metadata: {name: notlist}
spec:
  containers: 3
`
		if err := os.WriteFile(input, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, config, input)
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, stderr)
		}
		for _, want := range []string{
			input + `:9:5: pod/clash error: conflict: spec.initContainers: container "envoy" already exists`,
			input + `:16:15: pod/notlist error: invalid_object: spec.containers: must be a list (document 2)`,
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})
}
