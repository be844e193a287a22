// Command etcd builds etcd v3.6 (go.etcd.io/etcd/server/v3, whose go.mod
// holds replace directives, so it cannot be go installed) for the tests'
// control plane. Debian's etcd 3.4.23 lacks the watch progress requests
// kube-apiserver v1.37 needs to serve streaming lists (sendInitialEvents),
// which kwok's client asks for. See hack/build-apiserver.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
