package node_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinject/kubectl-inject/test/node"
)

// webDeployment is a Deployment of the app on port 8080, with extra
// fields added to its pod spec (indented six spaces) and args to the app.
// The app has a readinessProbe, as a served app has: without one its
// container is Ready the moment it starts, before it listens, and a
// request the proxy forwards then is refused.
func webDeployment(podSpec string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
%s      containers:
      - name: app
        image: %s
        args: [%s]
        ports:
        - containerPort: 8080
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 1
`, podSpec, node.AppImage, strings.Join(quoted, ", "))
}

// TestDeployment injects a Deployment each way: its Pod becomes Ready,
// with the proxy a native sidecar; the app container started after the
// proxy's startupProbe passed; and a client Pod's request to the Pod's
// port 10000 reaches the app through the proxy.
func TestDeployment(t *testing.T) {
	n.Require(t)
	eachWay(t, nil, func(t *testing.T, w way, ns string) {
		mustSucceed(t, w.deploy(t, ns, webDeployment("")), "inject")
		kubectl(t, "", "rollout", "status", "-n", ns, "deploy/web", "--timeout=2m")
		pod := readyPod(t, ns, "app=web")

		proxy, native := sidecar(pod)
		if !native {
			t.Fatalf("the proxy is not a native sidecar: %s", describe(pod))
		}
		if proxy.StartupProbe == nil {
			t.Errorf("the native sidecar has no startupProbe: the app may start before the proxy is ready")
		}
		proxyStart, appStart := startedAt(t, pod.Status.InitContainerStatuses, "envoy"), startedAt(t, pod.Status.ContainerStatuses, "app")
		// The stand-in binds its ports a second after it starts: an app
		// that waited for its startupProbe starts at least a second later.
		if !appStart.After(proxyStart) {
			t.Errorf("the app started at %s, not after the proxy (%s)", appStart, proxyStart)
		}

		// Through the proxy, from the host: when the app started, and
		// when the proxy first said it was ready.
		answer, err := get("http://" + pod.Status.PodIP + ":10000/")
		if err != nil {
			t.Fatalf("through the proxy: %v", err)
		}
		stats, err := get("http://" + pod.Status.PodIP + ":9902/stats/prometheus")
		if err != nil {
			t.Fatalf("the proxy's stats: %v", err)
		}
		appNanos, readyNanos := startedNanos(t, answer), metrics(stats)["standin_first_ready_unix_nanos"]
		if ready, _ := strconv.ParseInt(readyNanos, 10, 64); ready == 0 || appNanos <= ready {
			t.Errorf("the app started at %d ns, before the proxy first answered /ready (%s ns)", appNanos, readyNanos)
		}

		// And from another Pod, over the Pod network.
		msg := clientPod(t, ns, "http://"+pod.Status.PodIP+":10000/")
		if !strings.Contains(msg, "app started=") {
			t.Errorf("the client Pod got %q, not the app's answer", msg)
		}
	})
}

// startedAt is when the named container's running state started.
func startedAt(t *testing.T, statuses []corev1.ContainerStatus, name string) time.Time {
	t.Helper()
	for _, s := range statuses {
		if s.Name == name && s.State.Running != nil {
			return s.State.Running.StartedAt.Time
		}
	}
	t.Fatalf("no running container %s in %+v", name, statuses)
	return time.Time{}
}

// startedNanos reads the app's start time from its answer.
func startedNanos(t *testing.T, answer string) int64 {
	t.Helper()
	var nanos int64
	var state string
	if _, err := fmt.Sscanf(answer, "app started=%d state=%s", &nanos, &state); err != nil {
		t.Fatalf("the app's answer %q: %v", answer, err)
	}
	return nanos
}

// clientPod runs the app as a client Pod (opted out of injection) that
// asks url, waits until it succeeded, and returns what it got.
func clientPod(t *testing.T, ns, url string) string {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "client",
			Annotations: map[string]string{"sidecar.kinject.dev/inject": "false"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "client", Image: node.AppImage, Args: []string{"-get", url},
				SecurityContext: restrictedContainer(),
			}},
		},
	}
	if _, err := admin(t).CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the client Pod: %v", err)
	}
	var got *corev1.Pod
	eventually(t, 90*time.Second, "the client Pod to finish", func() bool {
		var err error
		got, err = admin(t).CoreV1().Pods(ns).Get(ctx, "client", metav1.GetOptions{})
		return err == nil && (got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed)
	})
	msg := ""
	if s := got.Status.ContainerStatuses; len(s) == 1 && s[0].State.Terminated != nil {
		msg = s[0].State.Terminated.Message
	}
	if got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the client Pod failed: %s", msg)
	}
	return msg
}

// restrictedContainer is a container security context that Pod Security
// "restricted" admits.
func restrictedContainer() *corev1.SecurityContext {
	yes, no := true, false
	return &corev1.SecurityContext{
		RunAsNonRoot:             &yes,
		AllowPrivilegeEscalation: &no,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
