// Package cluster runs a real, throw-away Kubernetes control plane (etcd plus
// kube-apiserver, no controllers, no nodes) for live tests of the plugin and
// the KRM function.
//
// The binaries are looked up from the environment variables KUBE_APISERVER and
// ETCD, then from the tool cache ($KINJECT_CACHE/bin, default
// $HOME/.cache/kubectl-inject/bin), then from PATH. Prepare them with:
//
//	hack/build-apiserver.sh   # builds kube-apiserver v1.37.2 (~11-15 min cold)
//	hack/install-tools.sh     # etcd (apt etcd-server), kustomize, krew
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
// self-signed serving certificate. Since no controller manager runs,
// Deployments are stored but never produce ReplicaSets or Pods, namespaces get
// no default ServiceAccount and deleted namespaces stay Terminating.
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
