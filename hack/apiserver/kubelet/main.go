// Command kubelet builds the upstream kubelet from k8s.io/kubernetes, for
// the real node of the tests (test/node, hack/build-apiserver.sh): Pods
// whose containers start and stop on a containerd of the tests' own.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kubelet/app"

	_ "k8s.io/component-base/logs/json/register" // json log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
)

func main() {
	command := app.NewKubeletCommand(context.Background())
	code := cli.Run(command)
	os.Exit(code)
}
