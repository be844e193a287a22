// Command kube-scheduler builds the upstream kube-scheduler from
// k8s.io/kubernetes, for the control plane of the live tests (see
// test/cluster and hack/build-apiserver.sh).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	_ "k8s.io/component-base/logs/json/register" // json log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
)

func main() {
	command := app.NewSchedulerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
