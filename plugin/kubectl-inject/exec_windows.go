//go:build windows

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// handOver starts the full command with this process's stdio and exits with its
// exit code (Windows cannot replace a running process).
func handOver(full string, args []string) error {
	c := exec.Command(full, args...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", full, err)
	}
	os.Exit(0)
	return nil
}
