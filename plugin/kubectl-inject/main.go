package main

import (
	"fmt"
	"os"

	"github.com/kinject/kubectl-inject/internal/sibling"
	"github.com/kinject/kubectl-inject/pkg/config"
	"github.com/kinject/kubectl-inject/plugin/local"
)

// FullCommand is the binary that serves every command line but --local:
// it lies in the same directory as kubectl-inject.
const FullCommand = "kinject-live"

func main() {
	args := os.Args[1:]
	if os.Getenv(helmPluginEnv) != "" {
		os.Exit(runUnderHelm(args)) // Helm 4's post-renderer: see helm.go
	}
	if code, served := local.Serve(args, config.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}); served {
		os.Exit(code)
	}
	full, err := fullCommand()
	if err == nil {
		err = handOver(full, args) // returns only when the full command could not be started
	}
	fmt.Fprintf(os.Stderr, "error: %v\n", err)
	os.Exit(1)
}

// fullCommand finds kinject-live beside this binary, following
// symbolic links (krew links only kubectl-inject into its bin directory).
func fullCommand() (string, error) {
	full, err := sibling.Path(FullCommand)
	if err != nil {
		return "", fmt.Errorf("find %s: %w", FullCommand, err)
	}
	if _, err := os.Stat(full); err != nil {
		return "", fmt.Errorf("kubectl-inject needs %s beside it for everything but --local (live objects, --help, completion, and templates whose expressions only cel-go evaluates): %w; install the binaries of one release together (krew does)", FullCommand, err)
	}
	return full, nil
}
