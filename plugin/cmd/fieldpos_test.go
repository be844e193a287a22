package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFieldErrorPositions: through the real binary, --local reports an
// error about a field at that field's line and column (not at the
// document's first line), in a file of several documents.
func TestFieldErrorPositions(t *testing.T) {
	const file = `# first
apiVersion: v1
kind: Pod
metadata: {name: clash}
spec:
  containers:
  - name: app
    image: a
  - name: envoy
    image: b
---
apiVersion: v1
kind: Pod
metadata: {name: port}
spec:
  containers:
  - name: app
    image: a
    ports:
    - containerPort: 10000
---
apiVersion: v1
kind: Pod
metadata: {name: notlist}
spec:
  containers: 3
`
	cases := []struct{ name, want string }{
		{"a container of the sidecar's name", `app.yaml:9:5: pod/clash error: conflict: spec.initContainers: container "envoy" already exists`},
		{"a port in use", `app.yaml:20:7: pod/port error: conflict: spec.containers: sidecar "envoy" port 10000 is already used by container "app" (document 2)`},
		{"containers not a list", `app.yaml:26:15: pod/notlist error: invalid_object: spec.containers: must be a list (document 3)`},
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), file)
	stderr, code := runPlugin(t, dir, "--local", "-f", "app.yaml")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, stderr)
			}
		})
	}
}
