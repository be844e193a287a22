package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinject/kubectl-inject/pkg/inject"
	"github.com/kinject/kubectl-inject/pkg/inject/naming"
	"github.com/kinject/kubectl-inject/test/cluster"
)

// What the parts that run an API server share (live, admission, status):
// the throw-away cluster and its client, the objects they create with a
// pool of workers, the checks of what was injected, and the commands they
// run against it.

// startCluster starts a throw-away etcd + kube-apiserver (test/cluster) with
// the extra kube-apiserver flags args, within 3 minutes, and logs how long
// it took under the part's name. It returns the cluster, its admin config
// with client rate limits high enough not to slow the bench (QPS 2000,
// burst 4000) and a clientset of that config. The caller stops the cluster.
func startCluster(part string, args ...string) (*cluster.Cluster, *rest.Config, *kubernetes.Clientset, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t0 := time.Now()
	c, err := cluster.Start(ctx, args...)
	cancel()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start the test cluster: %w", err)
	}
	logf("%s: cluster up in %s at %s", part, time.Since(t0).Round(100*time.Millisecond), c.URL)
	cfg := c.AdminConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.Stop()
		return nil, nil, nil, err
	}
	return c, cfg, cs, nil
}

// parallel calls f(0) .. f(n-1) on the given number of workers and returns
// one of the errors f returned, nil when none did.
func parallel(n, workers int, f func(i int) error) error {
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// createNamespace creates namespace ns.
func createNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	return prepareNamespace(ctx, cs, ns)
}

// prepareNamespace makes ns ready for the embedded default, as a user
// does: enabled for admission, with the ConfigMap its sidecar mounts.
func prepareNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	patch := []byte(`{"metadata":{"labels":{"` + naming.NamespaceLabelFor("") + `":"` + naming.NamespaceEnabled + `"}}}`)
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("enable %s: %w", ns, err)
	}
	for _, r := range inject.DefaultTemplate().References() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: r.Name}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s in %s: %w", r, ns, err)
		}
	}
	return nil
}

// deploymentTemplate is the first Deployment of the generator's output.
func deploymentTemplate() (*appsv1.Deployment, error) {
	src, err := genApps(1)
	if err != nil {
		return nil, err
	}
	var d appsv1.Deployment
	if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(splitDocs(src)[0]), 4096).Decode(&d); err != nil {
		return nil, fmt.Errorf("decode the generated Deployment: %w", err)
	}
	if d.Kind != "Deployment" || len(d.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("the generator's first document is not a Deployment with containers")
	}
	return &d, nil
}

// createDeployments creates namespace ns with n Deployments app-0..app-(n-1),
// 32 at a time.
func createDeployments(ctx context.Context, cs kubernetes.Interface, tmpl *appsv1.Deployment, ns string, n int) error {
	if err := createNamespace(ctx, cs, ns); err != nil {
		return err
	}
	return parallel(n, 32, func(i int) error {
		d := tmpl.DeepCopy()
		name := fmt.Sprintf("app-%d", i)
		d.Name, d.Namespace = name, ns
		d.Labels["app"] = name
		d.Spec.Selector.MatchLabels["app"] = name
		d.Spec.Template.Labels["app"] = name
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s/%s: %w", ns, name, err)
		}
		return nil
	})
}

// hasEnvoy reports whether any of the lists holds the injected sidecar (a
// container named envoy).
func hasEnvoy(lists ...[]corev1.Container) bool {
	for _, l := range lists {
		for _, c := range l {
			if c.Name == "envoy" {
				return true
			}
		}
	}
	return false
}

// countInjected counts the Deployments of ns whose Pod template has the
// envoy container (or init container).
func countInjected(ctx context.Context, cs kubernetes.Interface, ns string) (int, error) {
	list, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range list.Items {
		if hasEnvoy(d.Spec.Template.Spec.Containers, d.Spec.Template.Spec.InitContainers) {
			n++
		}
	}
	return n, nil
}

// deployAll runs `plugin deploy --all -n NS --kubeconfig KC FLAGS...` and
// returns its wall time and stderr (the plugin's result lines); the error
// holds the last lines of stderr.
func deployAll(plugin, kubeconfig, ns string, flags ...string) (time.Duration, string, error) {
	args := append([]string{"deploy", "--all", "-n", ns, "--kubeconfig", kubeconfig}, flags...)
	cmd := exec.Command(plugin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, "", fmt.Errorf("kubectl-inject %s: %v\n%s", strings.Join(append([]string{"deploy", "--all", "-n", ns}, flags...), " "), err, tailLines(stderr.String(), 20))
	}
	return d, stderr.String(), nil
}

// kubectlVersion is the client version kubectl prints ("unknown" when it
// cannot run).
func kubectlVersion(kubectl string) string {
	out, err := exec.Command(kubectl, "version", "--client").Output()
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Client Version:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "Client Version:"))
		}
	}
	return strings.TrimSpace(string(out))
}

// tailLines is the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
