// Command kube-apiserver builds the upstream kube-apiserver from
// k8s.io/kubernetes so live tests can run against a real API server without
// downloading release binaries. See hack/build-apiserver.sh.
package main

import (
	"os"
	_ "time/tzdata" // for timeZone support in CronJob

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"

	_ "k8s.io/component-base/logs/json/register" // json log format, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
)

func main() {
	command := app.NewAPIServerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
