package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/kinject/kubectl-inject/pkg/config"
	"io"
	"os"
	"os/exec"

	"github.com/kinject/kubectl-inject/plugin/local"
)

// helmPluginEnv is set by Helm 4 in the environment of the plugins it runs
// (HELM_PLUGIN_NAME, with HELM_PLUGIN_DIR), so also of kubectl-inject run
// as its post-renderer plugin (plugin/helm/plugin.yaml).
const helmPluginEnv = "HELM_PLUGIN_NAME"

// runUnderHelm runs a command line for Helm 4 and returns its exit code.
// Helm 4.3 reads a post-renderer's stdout, and drops what it writes on
// stderr: a failure shows only as `plugin "kubectl-inject" exited with
// error`. So stderr is also kept here and, when the command fails, written
// to Helm's own stderr where this system lets us reach it (helmStderr),
// before Helm's line: the message that names the document and the field
// reaches the user, as Helm 3 shows a post-renderer's stderr on failure.
// A command line the front door does not serve runs kinject-live as a
// child, not in this process's place, for the same reason.
func runUnderHelm(args []string) int {
	var kept bytes.Buffer
	errOut := io.MultiWriter(os.Stderr, &kept)
	code, served := local.Serve(args, config.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: errOut})
	if !served {
		code = runFull(args, errOut)
	}
	if code != 0 {
		if helm := helmStderr(); helm != nil {
			helm.Write(kept.Bytes())
			helm.Close()
		}
	}
	return code
}

// runFull runs kinject-live with args as a child with this process's
// stdin and stdout, and its stderr to errOut, and returns its exit code.
func runFull(args []string, errOut io.Writer) int {
	full, err := fullCommand()
	if err == nil {
		c := exec.Command(full, args...)
		c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, errOut
		err = c.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			err = fmt.Errorf("run %s: %w", full, err)
		}
	}
	if err != nil {
		fmt.Fprintf(errOut, "error: %v\n", err)
		return 1
	}
	return 0
}
