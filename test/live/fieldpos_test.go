package live

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinject/kubectl-inject/internal/testbin"
)

// fieldFile holds a Deployment with a container of the sidecar's name,
// one whose app uses the sidecar's port, and one whose containers are not
// a list; the comments mark the fields the errors must point at.
const fieldFile = `# three objects, each with a field that stops the injection
apiVersion: apps/v1
kind: Deployment
metadata:
  name: clash
spec:
  replicas: 1
  selector:
    matchLabels: {app: clash}
  template:
    metadata:
      labels: {app: clash}
    spec:
      containers:
      - name: app
        image: nginx:1.27
      - name: envoy # CONTAINER
        image: nginx:1.27
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: port
spec:
  replicas: 1
  selector:
    matchLabels: {app: port}
  template:
    metadata:
      labels: {app: port}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        ports:
        - containerPort: 10000 # PORT
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: notlist
spec:
  template:
    spec:
      containers: {name: app} # NOTLIST
`

// position returns "line:column:" of the text after the marker's line's
// indentation ("- name: envoy # CONTAINER" is at the "-"), or of a flow
// value ("{name: app}") for NOTLIST.
func position(t *testing.T, text, marker string) string {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "# "+marker) {
			continue
		}
		col := len(line) - len(strings.TrimLeft(line, " ")) + 1
		if strings.HasPrefix(strings.TrimLeft(line, " "), "- ") {
			col += 2 // the item's mapping begins after the dash
		}
		if j := strings.Index(line, ": {"); j >= 0 {
			col = j + 3
		}
		return strconv.Itoa(i+1) + ":" + strconv.Itoa(col) + ":"
	}
	t.Fatalf("no marker %s", marker)
	return ""
}

// runPlugin runs the built kubectl-inject as admin and returns its stderr
// and exit code.
func runPlugin(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	cmd := exec.Command(bin, append([]string{"--kubeconfig", c.AdminKubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	code, _, stderr := testbin.Exec(t, cmd)
	t.Logf("kubectl-inject %s\n--- exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr)
	return stderr, code
}

// TestFieldErrorsInFile: live -f, through the real binary, reports an
// error about a field at that field's line and column in the file, as
// --local does: a container of the sidecar's name and a port in use (found
// in the live objects, which the file's copies match), and containers that
// are not a list (the file's object, which is not looked up).
func TestFieldErrorsInFile(t *testing.T) {
	c.Require(t)
	ns := namespace(t)
	docs := strings.Split(fieldFile, "---\n")
	create(t, ns, deployments, docs[0])
	create(t, ns, deployments, docs[1])
	file := writeFile(t, "app.yaml", fieldFile)
	stderr, code := runPlugin(t, "-f", file, "-n", ns)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	// Each error's line: where, the object, its reason code, the field.
	wants := []string{
		file + ":" + position(t, fieldFile, "CONTAINER") + ` deployment.apps/clash error: conflict: spec.template.spec.initContainers: container "envoy" already exists`,
		file + ":" + position(t, fieldFile, "PORT") + ` deployment.apps/port error: conflict: spec.template.spec.containers: sidecar "envoy" port 10000 is already used by container "app"`,
		file + ":" + position(t, fieldFile, "NOTLIST") + ` deployment.apps/notlist error: invalid_object: spec.template.spec.containers: must be a list (document 3)`,
	}
	for _, want := range wants {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	// --local says the same of the same file, word for word.
	stderr, code = runPlugin(t, "--local", "-f", file)
	if code != 1 {
		t.Fatalf("--local: exit %d, want 1", code)
	}
	for _, want := range wants {
		if !strings.Contains(stderr, want) {
			t.Errorf("--local: stderr lacks %q", want)
		}
	}
}
