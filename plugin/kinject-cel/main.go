// Command kinject-cel evaluates template expressions with cel-go for the
// programs that do not link it: inject-fn and kubectl-inject (--local)
// start it on first need, from beside themselves, and talk to it over
// its standard input and output, one JSON line each way (package podexpr,
// helper.go). The embedded default's expressions seldom need it; a
// template whose expressions go beyond the subset the core evaluates
// always does. It is not a command for people: --version is all it
// answers on a terminal.
package main

import (
	"fmt"
	"os"

	"github.com/kinject/kubectl-inject/pkg/inject/podexpr"
	"github.com/kinject/kubectl-inject/pkg/inject/podexpr/celgo"
	"github.com/kinject/kubectl-inject/pkg/version"
)

func main() {
	if len(os.Args) > 1 {
		if os.Args[1] == "--version" {
			fmt.Println(podexpr.HelperName, version.String())
			return
		}
		fmt.Fprintf(os.Stderr, "%s takes no arguments: inject-fn and kubectl-inject run it to evaluate template expressions with cel-go\n", podexpr.HelperName)
		os.Exit(2)
	}
	if err := podexpr.ServeHelper(os.Stdin, os.Stdout, celgo.Compile); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", podexpr.HelperName, err)
		os.Exit(1)
	}
}
