package node_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinject/kubectl-inject/internal/testbin"
	"github.com/kinject/kubectl-inject/test/node"
)

func admin(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := c.AdminClient()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// command is one run of a program.
type command struct {
	stdout, stderr string
	code           int
}

// execute runs bin with args as admin, the plugin binaries first on
// PATH (so that kubectl finds kubectl-inject), stdin fed from stdin.
// --kubeconfig goes last: kubectl takes no flag before a plugin's name.
func execute(t testing.TB, stdin, bin string, args ...string) command {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--kubeconfig", c.AdminKubeconfig)...)
	cmd.Env = append(os.Environ(), "PATH="+testbin.PluginDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader(stdin)
	var r command
	r.code, r.stdout, r.stderr = testbin.Exec(t, cmd)
	t.Logf("%s %s\n--- exit %d, stderr:\n%s", filepath.Base(bin), strings.Join(args, " "), r.code, r.stderr)
	return r
}

// kubectl runs the kubectl built at the API server's version; a
// failure fails t.
func kubectl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	r := execute(t, stdin, testbin.NeedTool(t, "kubectl.v1.37.2"), args...)
	if r.code != 0 {
		t.Fatalf("kubectl %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// inject runs kubectl inject ARGS through kubectl, as a user does.
func inject(t testing.TB, args ...string) command {
	t.Helper()
	return execute(t, "", testbin.NeedTool(t, "kubectl.v1.37.2"), append([]string{"inject"}, args...)...)
}

// injectLocal runs the plugin binary on a file: kubectl-inject --local.
func injectLocal(t testing.TB, manifest string, args ...string) command {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	testbin.WriteFile(t, path, manifest)
	bin := filepath.Join(testbin.PluginDir(t), testbin.Plugin)
	return execute(t, "", bin, append([]string{"--local", "-f", path}, args...)...)
}

func mustSucceed(t testing.TB, r command, what string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
	}
}

var nsSeq atomic.Int32

// testLabel marks the namespaces the tests make.
const testLabel = "kinject.dev/test"

// namespace creates a namespace named after the test with labels, waits
// for its default ServiceAccount, and deletes it when the test ends.
func namespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimPrefix(t.Name(), "Test")) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	base := b.String()
	if len(base) > 40 {
		base = base[:40]
	}
	name := fmt.Sprintf("%s-%d", base, nsSeq.Add(1))
	all := map[string]string{testLabel: "true"}
	for k, v := range labels {
		all[k] = v
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all}}
	if _, err := admin(t).CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dumpPods(t, name)
		}
		_ = admin(t).CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	eventually(t, time.Minute, "the default ServiceAccount of "+name, func() bool {
		_, err := admin(t).CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	return name
}

// noTestNamespaces waits until the namespaces of earlier tests are gone,
// for a test that works on every namespace (-A).
func noTestNamespaces(t testing.TB) {
	t.Helper()
	eventually(t, 2*time.Minute, "the namespaces of earlier tests to go", func() bool {
		l, err := admin(t).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{LabelSelector: testLabel})
		return err == nil && len(l.Items) == 0
	})
}

// eventually polls cond every 200 ms until it holds, or fails after d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// podsOf lists the Pods of ns matching selector that are not being
// deleted.
func podsOf(t testing.TB, ns, selector string) []corev1.Pod {
	t.Helper()
	l, err := admin(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list pods in %s: %v", ns, err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// readyPod waits until ns has exactly one live Pod of selector, Ready
// and with the sidecar, and returns it.
func readyPod(t testing.TB, ns, selector string) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	eventually(t, 2*time.Minute, "a Ready Pod "+selector+" with the sidecar in "+ns, func() bool {
		pods := podsOf(t, ns, selector)
		if len(pods) != 1 || !isReady(pods[0]) {
			return false
		}
		if c, _ := sidecar(pods[0]); c == nil {
			return false
		}
		pod = pods[0]
		return true
	})
	return pod
}

func isReady(p corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sidecar returns the Pod's injected container (named envoy) and whether
// it is a native sidecar (an init container with restartPolicy Always).
func sidecar(p corev1.Pod) (c *corev1.Container, native bool) {
	for i, ic := range p.Spec.InitContainers {
		if ic.Name == "envoy" {
			return &p.Spec.InitContainers[i], ic.RestartPolicy != nil && *ic.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	for i, cc := range p.Spec.Containers {
		if cc.Name == "envoy" {
			return &p.Spec.Containers[i], false
		}
	}
	return nil, false
}

// get asks url from the test process (the host reaches the Pods through
// the node's bridge) and returns the body of a 200.
func get(url string) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}

// metrics reads Prometheus text into name -> value.
func metrics(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			out[f[0]] = f[1]
		}
	}
	return out
}

// describe says what containers a Pod has and what state each is in.
func describe(p corev1.Pod) string {
	var b strings.Builder
	for _, l := range []struct {
		kind     string
		specs    []corev1.Container
		statuses []corev1.ContainerStatus
	}{{"init", p.Spec.InitContainers, p.Status.InitContainerStatuses}, {"", p.Spec.Containers, p.Status.ContainerStatuses}} {
		for _, c := range l.specs {
			fmt.Fprintf(&b, "[%s %s %s", l.kind, c.Name, c.Image)
			if c.RestartPolicy != nil {
				fmt.Fprintf(&b, " restartPolicy=%s", *c.RestartPolicy)
			}
			for _, s := range l.statuses {
				if s.Name == c.Name {
					fmt.Fprintf(&b, " ready=%t state=%+v", s.Ready, s.State)
				}
			}
			b.WriteString("] ")
		}
	}
	return b.String()
}

// dumpPods logs the Pods of ns and their events, for a failed test.
func dumpPods(t testing.TB, ns string) {
	ctx := context.Background()
	pods, err := admin(t).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range pods.Items {
		t.Logf("pod %s: phase %s, containers %s", p.Name, p.Status.Phase, describe(p))
	}
	events, err := admin(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, e := range events.Items {
		t.Logf("event %s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
	}
}

var policyMu sync.Mutex

// policies already installed, by profile ("" for the default one).
var policies = map[string]bool{}

// enableAdmission installs the admission policy of profile once (the
// stand-in's image, flags added), labels ns for it, and waits until the
// API server injects Pods there.
func enableAdmission(t testing.TB, ns, profile string, flags ...string) {
	t.Helper()
	policyMu.Lock()
	if !policies[profile] {
		args := append([]string{"policy", "--apply", "--image", node.ProxyImage}, flags...)
		if profile != "" {
			args = append(args, "--profile", profile)
		}
		mustSucceed(t, inject(t, args...), "install the policy")
		policies[profile] = true
	}
	policyMu.Unlock()
	args := []string{"enable", ns}
	if profile != "" {
		args = append(args, "--profile", profile)
	}
	mustSucceed(t, inject(t, args...), "enable admission in "+ns)
	waitPolicyImage(t, ns, node.ProxyImage)
}

// waitPolicyImage waits until a Pod created in ns (a dry run) comes back
// with a container of image. The Pod passes Pod Security "restricted",
// so that any namespace admits it.
func waitPolicyImage(t testing.TB, ns, image string) {
	t.Helper()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: node.AppImage, SecurityContext: restrictedContainer(),
		}}},
	}
	eventually(t, time.Minute, "the policy injecting "+image+" in "+ns, func() bool {
		got, err := admin(t).CoreV1().Pods(ns).Create(context.Background(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false
		}
		for _, cs := range [][]corev1.Container{got.Spec.InitContainers, got.Spec.Containers} {
			for _, c := range cs {
				if c.Image == image {
					return true
				}
			}
		}
		return false
	})
}
