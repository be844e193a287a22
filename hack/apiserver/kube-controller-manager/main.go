// Command kube-controller-manager builds the upstream kube-controller-manager
// from k8s.io/kubernetes, for the control plane of the live tests (see
// test/cluster and hack/build-apiserver.sh).
package main

import (
	"os"
	_ "time/tzdata" // for CronJob time zones

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"

	_ "k8s.io/component-base/logs/json/register" // json log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
)

func main() {
	command := app.NewControllerManagerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
