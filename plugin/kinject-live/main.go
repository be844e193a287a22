// Command kinject-live is the full kubectl-inject command: live
// objects through the API server, --local, --help, completion. The
// kubectl-inject binary runs --local command lines itself and hands every
// other one to this binary, which must lie beside it. Its name has no
// "kubectl-" prefix, so kubectl does not take it for a plugin of its own.
package main

import (
	"github.com/kinject/kubectl-inject/plugin/local"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/plugin/cmd"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cmd.Execute(cmd.NewCmdInject(streams, local.FrontEnd{}), streams))
}
