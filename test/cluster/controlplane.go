package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Controllers are the kube-controller-manager controllers the control
// plane runs: the workload controllers, garbage collection, and the two
// that give new namespaces a default ServiceAccount and delete
// namespaces. Nothing else (no node lifecycle: kwok's Nodes stay Ready).
var Controllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "job-controller", "cronjob-controller",
	"garbage-collector-controller", "serviceaccount-controller", "namespace-controller",
	"disruption-controller",
}

// NodeControllers are the controllers added for a real Node: its Pods
// mount the namespace's kube-root-ca.crt ConfigMap (the service-account
// volume), which only the root CA publisher creates; the EndpointSlices of
// Services list its Pods by their readiness, which clients and the drain
// of an upgrade in place read.
var NodeControllers = []string{"root-ca-cert-publisher", "endpointslice-controller"}

// DefaultNodes is how many simulated Nodes a control plane gets.
const DefaultNodes = 3

// startControlPlane starts kube-controller-manager, kube-scheduler and
// kwok against the running API server, creates the Nodes kwok manages,
// and returns once the Nodes are Ready and the controllers work (the
// default namespace has its ServiceAccount). With nodes 0 (a real Node
// comes later) kwok is not run.
func (c *Cluster) startControlPlane(ctx context.Context, nodes int) error {
	kcmBin, err := findBinary("KUBE_CONTROLLER_MANAGER", "kube-controller-manager")
	if err != nil {
		return err
	}
	schedBin, err := findBinary("KUBE_SCHEDULER", "kube-scheduler")
	if err != nil {
		return err
	}
	var kwokBin string
	if nodes > 0 {
		if kwokBin, err = findBinary("KWOK", "kwok"); err != nil {
			return err
		}
	}
	controllers := Controllers
	if nodes == 0 {
		controllers = append(append([]string(nil), Controllers...), NodeControllers...)
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	c.ControllerManagerLog = filepath.Join(c.LogDir, "kube-controller-manager.log")
	c.SchedulerLog = filepath.Join(c.LogDir, "kube-scheduler.log")
	if nodes > 0 {
		c.KwokLog = filepath.Join(c.LogDir, "kwok.log")
	}

	c.controllerManager, err = startProcess(kcmBin, []string{
		"--kubeconfig=" + c.componentKubeconfig(controllerManagerUser),
		"--leader-elect=false",
		"--controllers=" + strings.Join(controllers, ","),
		"--service-account-private-key-file=" + filepath.Join(c.Dir, "sa.key"),
		"--root-ca-file=" + c.rootCAFile(),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--cert-dir=" + filepath.Join(c.Dir, "kcm-certs"),
		"--kube-api-qps=200", "--kube-api-burst=400",
		// Rollouts are waited on by tests: no batching delay.
		"--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
		"--concurrent-statefulset-syncs=10", "--concurrent-daemonset-syncs=5",
		"--profiling=false",
	}, c.ControllerManagerLog)
	if err != nil {
		return err
	}
	c.scheduler, err = startProcess(schedBin, []string{
		"--kubeconfig=" + c.componentKubeconfig(schedulerUser),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[1]),
		"--cert-dir=" + filepath.Join(c.Dir, "scheduler-certs"),
		"--kube-api-qps=200", "--kube-api-burst=400",
		"--profiling=false",
	}, c.SchedulerLog)
	if err != nil {
		return err
	}
	checks := []healthCheck{
		{c.controllerManager, "https://127.0.0.1:" + strconv.Itoa(ports[0]) + "/healthz", c.ControllerManagerLog, "kube-controller-manager"},
		{c.scheduler, "https://127.0.0.1:" + strconv.Itoa(ports[1]) + "/healthz", c.SchedulerLog, "kube-scheduler"},
	}
	if nodes == 0 {
		if err := waitHealthChecks(ctx, checks); err != nil {
			return err
		}
		return c.waitControllers(ctx)
	}
	stages := filepath.Join(c.Dir, "kwok.yaml")
	if err := writeFile(stages, kwokStages); err != nil {
		return err
	}
	kwokHealth := "127.0.0.1:" + strconv.Itoa(ports[2])
	c.kwok, err = startProcess(kwokBin, []string{
		"--kubeconfig=" + c.componentKubeconfig(kwokUser),
		"--config=" + stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + NodeAnnotation + "=fake",
		"--node-ip=10.240.0.1",
		"--cidr=10.240.0.0/16",
		"--server-address=" + kwokHealth,
		// kwok's client-go (v0.36) asks for a streaming list, which this API
		// server refuses over etcd 3.4 (no watch progress requests), and
		// does not fall back: plain lists and watches.
	}, c.KwokLog, "KUBE_FEATURE_WatchListClient=false")
	if err != nil {
		return err
	}

	checks = append(checks, healthCheck{c.kwok, "http://" + kwokHealth + "/healthz", c.KwokLog, "kwok"})
	if err := waitHealthChecks(ctx, checks); err != nil {
		return err
	}
	if err := c.createNodes(ctx, nodes); err != nil {
		return err
	}
	return c.waitControllers(ctx)
}

// healthCheck is a component's health endpoint and log.
type healthCheck struct {
	p         *process
	url, log  string
	component string
}

func waitHealthChecks(ctx context.Context, checks []healthCheck) error {
	for _, h := range checks {
		if err := waitHealthy(ctx, h.p, h.url, "", 2*time.Minute); err != nil {
			return fmt.Errorf("%s not healthy: %w\n%s", h.component, err, tail(h.log, 40))
		}
	}
	return nil
}

// createNodes creates n Nodes for kwok and waits until they are Ready.
func (c *Cluster) createNodes(ctx context.Context, n int) error {
	admin, err := c.AdminClient()
	if err != nil {
		return err
	}
	for i := range n {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{NodeAnnotation: "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"},
		}}
		if _, err := admin.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		c.Nodes = append(c.Nodes, name)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready := 0
		for _, node := range list.Items {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d kwok nodes to be Ready: %w\n%s", n, err, tail(c.KwokLog, 40))
	}
	// The API server's TaintNodesByCondition gives a new Node the
	// not-ready taint, which only the node lifecycle controller (not run
	// here: it would also want kubelet heartbeats) takes off.
	for _, name := range c.Nodes {
		patch := []byte(`{"spec":{"taints":null}}`)
		if _, err := admin.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("untaint node %s: %w", name, err)
		}
	}
	return nil
}

// waitControllers waits until the controller manager gave the default
// namespace its ServiceAccount: its informers are synced and its
// controllers run.
func (c *Cluster) waitControllers(ctx context.Context) error {
	admin, err := c.AdminClient()
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the controllers (default ServiceAccount): %w\n%s", err, tail(c.ControllerManagerLog, 40))
	}
	return nil
}
