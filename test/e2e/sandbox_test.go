package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImageSandboxed runs the function image as kpt and kustomize do, and
// tighter: no network, a read-only root filesystem, user nobody, no
// capabilities. The function must need none of them.
func TestImageSandboxed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image")
	}
	image(t)
	docker := need(t, "docker")
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # comment kept
  spec:
    template:
      spec:
        containers:
        - name: web
          image: nginx:1.27
`
	cmd := exec.Command(docker, "run", "--rm", "-i", "--network", "none", "--read-only",
		"--user", "65534:65534", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", Image)
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("docker run: %v\n%s", err, stderr)
	}
	for _, want := range []string{"- name: envoy", "name: web # comment kept", "sidecar.kinject.dev/status", "message: injected envoy"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	who, err := exec.Command(docker, "image", "inspect", "-f", "{{.Config.User}} {{json .Config.Entrypoint}}", Image).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(who)); got != `65534:65534 ["/inject-fn"]` {
		t.Errorf("image user and entrypoint = %s", got)
	}
}

// TestKptFnDoc: kpt shows the function's documentation from the image.
func TestKptFnDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image")
	}
	image(t)
	kpt := need(t, "kpt")
	out := mustRun(t, t.TempDir(), kpt, "fn", "doc", "--image", Image)
	for _, want := range []string{"FUNCTION CONFIG", "SidecarInjection", "envoy-initializer", "kpt fn eval --exec inject-fn"} {
		if !strings.Contains(out, want) {
			t.Errorf("kpt fn doc lacks %q:\n%s", want, out)
		}
	}
}
