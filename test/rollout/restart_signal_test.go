package rollout

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/pkg/rollout"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// TestRestartInterrupted sends SIGINT to kubectl inject restart (the
// released binaries) while it moves 8 slow Deployments 2 at a time: it
// starts nothing more, lets the 2 in flight finish, and exits 130; no
// workload is left mid-rollout. A second run completes.
func TestRestartInterrupted(t *testing.T) {
	c.Require(t)
	v1, v2 := writeFile(t, "v1.yaml", sidecarV1), writeFile(t, "v2.yaml", sidecarV2)
	ns := namespace(t, "s")
	for i := range 8 {
		create(t, ns, deployments, deployment(fmt.Sprintf("app-%d", i), 1, nil, map[string]string{cluster.ReadyAfterAnnotation: "3s"}))
	}
	expectCode(t, kinject(t, "deploy", "--all", "-n", ns, "--template", v1), 0)
	settled(t, ns)

	bin := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	cmd := exec.Command(bin, "restart", "-n", ns, "--max-in-flight", "2", "--template", v2, "--kubeconfig", c.AdminKubeconfig)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	started, sent := 0, time.Time{}
	scanner := bufio.NewScanner(stderr)
	for scanner.Scan() {
		line := scanner.Text()
		log.WriteString(line + "\n")
		if strings.Contains(line, " started (") {
			started++
		}
		if started == 2 && sent.IsZero() {
			sent = time.Now()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	t.Logf("kubectl inject restart, interrupted %s after the second start:\n%s", time.Since(sent).Round(time.Millisecond), log.String())
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want code 130", err)
	}
	if !strings.Contains(log.String(), "restart: interrupted: starting nothing more; waiting for the 2 in flight") {
		t.Errorf("stderr does not say what the interrupt does")
	}
	touched := 0
	for _, d := range list(t, ns, deployments) {
		d.SetKind("Deployment")
		if p := rollout.Status(&d); !p.Done {
			t.Errorf("%s is left mid-rollout: %s", d.GetName(), p.Message)
		}
		if strings.Contains(fmt.Sprint(d.Object["spec"]), "v1.34.0") {
			touched++
		}
	}
	if touched < 2 || touched == 8 {
		t.Errorf("%d of 8 Deployments were restarted; want those in flight (at least 2), not all", touched)
	}
	again := kinject(t, "restart", "-n", ns, "--max-in-flight", "2", "--template", v2)
	expectCode(t, again, 0)
	if n, which := behind(statusRows(t, "-n", ns, "--template", v2), nil); n != 0 {
		t.Errorf("%d Pods behind after the second run: %v", n, which)
	}
}
