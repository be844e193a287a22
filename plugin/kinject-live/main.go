// Command kinject-live is the full kubectl-inject command: live
// objects through the API server, --local, --help, completion. The
// kubectl-inject binary runs --local command lines itself and hands every
// other one to this binary, which must lie beside it. Its name has no
// "kubectl-" prefix, so kubectl does not take it for a plugin of its own.
//
// It links cel-go and evaluates template expressions in the process;
// kubectl-inject, which does not, runs kinject-cel for them.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
	"github.com/kinject/kubectl-inject/plugin/cmd"
	"github.com/kinject/kubectl-inject/plugin/local"
	"github.com/kinject/kubectl-inject/plugin/local/urlfetch"
)

func main() {
	podexpr.Use(celgo.Compile)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cmd.Execute(cmd.NewCmdInject(streams, local.FrontEnd{FetchURL: urlfetch.Get}), streams))
}
