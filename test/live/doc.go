// Package live holds the plugin's live tests: kubectl-inject against a real
// kube-apiserver and etcd started on loopback by test/cluster (no
// controllers, no nodes). Run them with
//
//	hack/build-apiserver.sh && hack/install-tools.sh
//	go test ./test/live/ -v
//
// They are skipped when the binaries are missing, except with CI=true.
package live
