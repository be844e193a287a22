// Package node runs a real Kubernetes node for the tests of what happens
// inside a Pod: a kubelet and a second containerd (CRI, its own config,
// root, state and socket; Docker's containerd is never touched) with a
// CNI bridge of its own (Bridge, PodCIDR; the bridge's address NodeIP is
// the node's IP), registered with a cluster of test/cluster started with
// Options.NodeName = Name. Images cannot be pulled here: BuildImages
// builds them FROM scratch with Docker (static Go binaries under
// images/), and Start imports them into containerd (PauseImage, AppImage,
// ProxyImage, a stand-in for Envoy).
//
// A node changes the host: mounts, /kubepods cgroups, the bridge and its
// veths, an iptables rule, the sysctls the kubelet sets
// (kernel.panic, kernel.panic_on_oops, vm.overcommit_memory), and paths
// the kubelet, libcni and containerd write whatever their configuration
// says. Start records the host (Snapshot: those paths' files with their
// modes, sizes and hashes, every iptables table of IPv4 and IPv6, links
// and routes) in /run/kinject-node.json; Stop deletes the Pods while the
// kubelet runs, stops it and containerd, and restores the host, which the
// package's tests then compare with the record, by content, before the
// node lock is released. A run killed before its Stop is undone by the next Start;
// MustStart also stops the node on SIGINT and SIGTERM, and before go
// test's -timeout would end the test binary. One node runs on
// a machine at a time: Start waits for an abstract unix socket, the
// node lock.
//
// It needs root, Docker, the kubelet of hack/build-apiserver.sh, and
// Debian's containerd, runc, containernetworking-plugins, iptables and
// iproute2 (hack/install-tools.sh installs them). Without them the
// tests skip, except when CI=true, where they fail.
//
// Typical use, one node per test binary:
//
//	func TestMain(m *testing.M) {
//		c := cluster.MustStartWith(cluster.Options{NodeName: node.Name})
//		n := node.MustStart(c, c.Stop)
//		code := m.Run()
//		n.Stop()
//		os.Exit(c.Finish(code))
//	}
package node
