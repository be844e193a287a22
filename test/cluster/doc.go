// Package cluster runs a real, throw-away Kubernetes cluster for live tests
// of the plugin and the KRM function: etcd plus kube-apiserver (Start), and,
// when asked for (StartWith with Options.ControlPlane), the control plane
// that makes workloads run: kube-controller-manager (the workload
// controllers and garbage collection, see Controllers), kube-scheduler, and
// kwok simulating DefaultNodes Nodes. Controllers then create the Pods,
// through admission; the scheduler binds them; kwok marks them Running and
// Ready with no container runtime, so rollouts complete and Jobs succeed.
// Pods can ask kwok to stay NotReady (HoldLabel) or to become Ready late
// (ReadyAfterAnnotation). A container image changed in place is answered
// as a kubelet would: the Pod Ready on the new image, or, for the image
// HoldImageAnnotation names, NotReady with the container waiting in
// ImagePullBackOff. Suites that only store objects leave the control
// plane off: it adds 6-11 s to the start on 2 cores (the Nodes Ready, the
// controllers running). The control plane runs on etcd v3.6 (ControlPlaneEtcd):
// kube-apiserver serves the streaming lists kwok asks for only over etcd
// 3.4.31+ or 3.5.13+, and the Debian etcd the other suites use is 3.4.23.
//
// With Options.NodeName the control plane is ready for a real kubelet
// (test/node) instead of kwok's Nodes: Node,RBAC authorization,
// NodeRestriction, a token for the Node (NodeKubeconfig), and the root
// CA published to every namespace. StartProcess, WaitHealthy, FindBinary,
// FreePorts and Tail give such a harness the cluster's way of running
// programs.
//
// The binaries are looked up from the environment variables KUBE_APISERVER,
// ETCD, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER and KWOK, then from the tool
// cache ($KINJECT_CACHE/bin, default $HOME/.cache/kubectl-inject/bin), then
// from PATH. Prepare them with:
//
//	hack/build-apiserver.sh   # kube-apiserver, kube-controller-manager, kube-scheduler, kubectl v1.37.2
//	hack/install-tools.sh     # etcd (apt etcd-server), kwok, kustomize, krew
//
// When they are missing, tests are skipped, except when CI=true, where the
// run fails loudly.
//
// Everything listens on 127.0.0.1 at free ports. The API server uses RBAC
// authorization and a static token file with two users:
//
//   - admin, in group system:masters (AdminConfig, AdminKubeconfig)
//   - viewer, with no permissions until GrantViewer gives it get/list/watch
//     on deployments in one namespace (ViewerConfig, ViewerKubeconfig)
//
// The kubeconfig files use insecure-skip-tls-verify against the API server's
// self-signed serving certificate. Without the control plane, Deployments
// are stored but never produce ReplicaSets or Pods, namespaces get no
// default ServiceAccount and deleted namespaces stay Terminating.
//
// Typical use, one cluster per test binary:
//
//	var c *cluster.Cluster
//
//	func TestMain(m *testing.M) {
//		c = cluster.MustStart()
//		code := m.Run()
//		c.Stop()
//		os.Exit(code)
//	}
//
//	func TestX(t *testing.T) {
//		c.Require(t) // skips when the binaries are missing (outside CI)
//		...
//	}
package cluster
