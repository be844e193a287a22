package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badDocument is a file whose second document does not parse (the Pod's
// labels, on line 18 of the file), followed by an empty document and a
// third object.
const badDocument = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: app, image: nginx:1.27}
---
apiVersion: v1
kind: Pod
metadata:
  labels: {a: [}
  name: p
spec:
  containers: [{name: app, image: nginx:1.27}]
---
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - {name: app, image: nginx:1.27}
`

// TestBadDocumentInFile: live -f reads files as --local does. A document
// that is not valid YAML is reported at its file's line and column with
// its document number, and the objects after it are still injected and
// counted; the exit code is 1.
func TestBadDocumentInFile(t *testing.T) {
	c.Require(t)
	dir := filepath.Join(t.TempDir(), "y")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(badDocument), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, stdin string
		args        []string
		where       string
	}{
		{"file", "", []string{"-f", file}, file},
		{"stdin", badDocument, []string{"-f", "-"}, "STDIN"},
		{"directory", "", []string{"-f", filepath.Dir(dir), "-R"}, file},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t)
			create(t, ns, deployments, deployment("web", ""))
			create(t, ns, deployments, deployment("api", ""))
			r := run(t, runOpts{stdin: tc.stdin}, append(tc.args, "-n", ns)...)
			want := "deployment.apps/web injected\n" +
				tc.where + ":18:16: document 2 error: invalid_yaml: not valid YAML: did not find expected node content\n" +
				"deployment.apps/api injected\n" +
				"error: 1 of 3 objects failed\n"
			if r.stderr != want || r.code != 1 {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", r.code, r.stderr, want)
			}
			for _, name := range []string{"web", "api"} {
				if !hasContainer(t, get(t, ns, deployments, name), "envoy", "spec", "template", "spec") {
					t.Errorf("deployment %s was not injected", name)
				}
			}
		})
	}
}

// TestFileObjectNotFound: an object of a file that the cluster cannot
// map (an unknown kind) or that names another namespace than --namespace
// is reported at its place in the file; the others are processed.
func TestFileObjectNotFound(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	create(t, ns, deployments, deployment("web", ""))
	input := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other, namespace: elsewhere}\n---\n" +
		"kind: Deployment\nmetadata: {name: noversion}\n---\n" +
		deployment("web", "")
	r := run(t, runOpts{stdin: input}, "-f", "-", "-n", ns)
	want := []string{
		`STDIN:1: widget.example.com/w error: no matches for kind "Widget" in version "example.com/v1" (is its CustomResourceDefinition installed?) (document 1)`,
		`STDIN:5: deployment.apps/other error: metadata.namespace: the object's namespace "elsewhere" does not match the namespace "` + ns + `" of the command line (pass --namespace=elsewhere) (document 2)`,
		`STDIN:9: deployment/noversion error: invalid_object: apiVersion: is required (document 3)`,
		`deployment.apps/web injected`,
		`error: 3 of 4 objects failed`,
	}
	if got := strings.TrimSuffix(r.stderr, "\n"); got != strings.Join(want, "\n") || r.code != 1 {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", r.code, got, strings.Join(want, "\n"))
	}
}

// TestFileWithoutObjects: as kubectl apply and --local, live -f of files
// that hold no object (comments only, or none that -l selects) is an
// error, not "No resources found".
func TestFileWithoutObjects(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	r := run(t, runOpts{stdin: "# nothing here\n---\n"}, "-f", "-", "-n", ns)
	expectCode(t, r, 1)
	expectStderr(t, r, "error: no objects to inject in -")
	r = run(t, runOpts{stdin: deployment("web", "")}, "-f", "-", "-n", ns, "-l", "app=other")
	expectCode(t, r, 1)
	expectStderr(t, r, "error: no objects to inject in - whose labels match app=other")
	if r.writes() != 0 {
		t.Errorf("wrote: %v", r.requests)
	}
}
