//go:build !windows

package main

import (
	"fmt"
	"os"
	"syscall"
)

// handOver replaces this process with the full command: the same PID, stdio,
// signals and exit code, as if the user had started it.
func handOver(full string, args []string) error {
	err := syscall.Exec(full, append([]string{full}, args...), os.Environ())
	return fmt.Errorf("run %s: %w", full, err)
}
