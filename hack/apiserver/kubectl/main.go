// Command kubectl builds the upstream kubectl at the test API server's
// version, so that tests that need a client within the supported version
// skew (kubectl rollout status, the bench's rollout loop) do not depend on
// the kubectl installed on the machine. See hack/build-apiserver.sh.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // as upstream
)

func main() {
	// As upstream: the verbosity is set before the command is built.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck // as upstream
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
